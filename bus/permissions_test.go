package bus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A party cannot subscribe beyond what is addressed to it: bank-a cannot
// read bank-b's embeddings to bank-c (nor any wildcard covering them),
// bank-b's personalized model, updates, ledger subject or inbox; the
// aggregator reads no embeddings; the auditor reads no updates. What is
// allowed is delivered.
func TestPermissionsSubscribe(t *testing.T) {
	e := startSecureServer(t)
	ps := map[string]*party{}
	for _, id := range []string{AggregatorID, "bank-a", "bank-b", "bank-c", AuditorID} {
		ps[id] = e.connect(t, id)
	}
	pb, _ := e.ring.Party("bank-b")
	pubB := pb.PublicKey
	s := func(kind Kind, parts ...string) string { return Subject(secJob, kind, parts...) }
	tests := []struct {
		name    string
		who     string // subscriber
		subject string
		pub     string // who publishes the probe; "" for none
		probe   string
		allowed bool
	}{
		{"bank reads embeddings addressed to it", "bank-a", s(KindEmb, "bank-b", "bank-a"), "bank-b", s(KindEmb, "bank-b", "bank-a"), true},
		{"bank reads its personalized model", "bank-a", s(KindModel, "bank-a"), AggregatorID, s(KindModel, "bank-a"), true},
		{"bank reads the global model", "bank-a", s(KindModel, "all"), AggregatorID, s(KindModel, "all"), true},
		{"bank reads rounds", "bank-a", s(KindRound), AggregatorID, s(KindRound), true},
		{"bank reads another's embeddings", "bank-a", s(KindEmb, "bank-b", "bank-c"), "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
		{"bank reads every embedding to another", "bank-a", s(KindEmb, "*", "bank-b"), "bank-c", s(KindEmb, "bank-c", "bank-b"), false},
		{"bank reads every embedding", "bank-a", s(KindEmb, ">"), "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
		{"bank reads the whole job", "bank-a", "gf." + secJob + ".>", "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
		{"bank reads everything", "bank-a", ">", "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
		{"bank reads another's model", "bank-a", s(KindModel, "bank-b"), AggregatorID, s(KindModel, "bank-b"), false},
		{"bank reads another's updates", "bank-a", s(KindUpdate, "bank-b"), "bank-b", s(KindUpdate, "bank-b"), false},
		{"bank reads another's live ledger", "bank-a", LedgerSubject(secJob, "bank-b"), "bank-b", LedgerSubject(secJob, "bank-b"), false},
		{"bank reads another's inbox", "bank-a", InboxPrefix(pubB) + ".>", "", "", false},
		{"bank reads every inbox", "bank-a", "_INBOX.>", "", "", false},
		{"bank intercepts JetStream requests", "bank-a", "$JS.API.>", "", "", false},
		{"aggregator reads updates", AggregatorID, s(KindUpdate, "*"), "bank-b", s(KindUpdate, "bank-b"), true},
		{"aggregator reads embeddings", AggregatorID, s(KindEmb, "bank-b", "bank-c"), "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
		{"auditor reads the ledger", AuditorID, LedgerSubject(secJob, "*"), "bank-b", LedgerSubject(secJob, "bank-b"), true},
		{"auditor reads updates", AuditorID, s(KindUpdate, "bank-b"), "bank-b", s(KindUpdate, "bank-b"), false},
		{"auditor reads embeddings", AuditorID, s(KindEmb, "bank-b", "bank-c"), "bank-b", s(KindEmb, "bank-b", "bank-c"), false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			who := ps[tc.who]
			got := make(chan *nats.Msg, 64)
			sub, err := who.nc.ChanSubscribe(tc.subject, got)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			who.flush(t)
			if tc.pub != "" {
				pub, tag, probe := ps[tc.pub], fmt.Sprintf("fence-%d", i), fmt.Sprintf("probe-%d", i)
				pub.publish(t, tc.probe, probe)
				pub.publish(t, fenceFor(tc.who, tc.pub), tag)
				pub.flush(t)
				who.awaitFence(t, tag)
				if v := pub.violations(t); len(v) > 0 {
					t.Fatalf("publisher %s refused: %v", tc.pub, v)
				}
				if delivered := contains(drain(got), tc.probe+" "+probe); delivered != tc.allowed {
					t.Fatalf("%s subscribed to %s: probe on %s delivered=%v, want %v", tc.who, tc.subject, tc.probe, delivered, tc.allowed)
				}
			}
			if denied := refused(who.violations(t), "Subscription", tc.subject); denied == tc.allowed {
				t.Fatalf("%s subscribing to %s: refused=%v, want %v", tc.who, tc.subject, denied, !tc.allowed)
			}
		})
	}
}

// A party cannot publish as another: bank-a's messages on bank-b's
// subjects, or on the aggregator's, never reach their subscribers, while
// its own do.
func TestPermissionsPublish(t *testing.T) {
	e := startSecureServer(t)
	ps := map[string]*party{}
	for _, id := range []string{AggregatorID, "bank-a", "bank-b", "bank-c", AuditorID} {
		ps[id] = e.connect(t, id)
	}
	s := func(kind Kind, parts ...string) string { return Subject(secJob, kind, parts...) }
	// Observers read what a victim's or the aggregator's subscribers read.
	observe := map[string][]string{
		AggregatorID: {s(KindHello, "*"), s(KindMetrics, "*"), s(KindBye, "*")},
		"bank-b":     {s(KindRound), s(KindDone), s(KindModel, "all"), s(KindModel, "bank-b")},
		"bank-c":     {s(KindEmb, "*", "bank-c")},
		AuditorID:    {LedgerSubject(secJob, "*")},
	}
	seen := map[string]chan *nats.Msg{}
	for id, subjects := range observe {
		seen[id] = make(chan *nats.Msg, 1024)
		for _, subj := range subjects {
			if _, err := ps[id].nc.ChanSubscribe(subj, seen[id]); err != nil {
				t.Fatal(err)
			}
		}
		ps[id].flush(t)
		if v := ps[id].violations(t); len(v) > 0 {
			t.Fatalf("%s: %v", id, v)
		}
	}
	// Probes on an observer's fence subjects (updates, embeddings to it)
	// arrive on its fence channel, ahead of the fence.
	tests := []struct {
		name     string
		who      string
		subject  string
		observer string
		allowed  bool
	}{
		{"bank publishes its update", "bank-a", s(KindUpdate, "bank-a"), AggregatorID, true},
		{"bank sends embeddings to a neighbour", "bank-a", s(KindEmb, "bank-a", "bank-c"), "bank-c", true},
		{"bank says hello", "bank-a", s(KindHello, "bank-a"), AggregatorID, true},
		{"bank writes its ledger subject", "bank-a", LedgerSubject(secJob, "bank-a"), AuditorID, true},
		{"bank publishes an update as another", "bank-a", s(KindUpdate, "bank-b"), AggregatorID, false},
		{"bank says hello as another", "bank-a", s(KindHello, "bank-b"), AggregatorID, false},
		{"bank reports metrics as another", "bank-a", s(KindMetrics, "bank-b"), AggregatorID, false},
		{"bank leaves as another", "bank-a", s(KindBye, "bank-b"), AggregatorID, false},
		{"bank sends embeddings as another", "bank-a", s(KindEmb, "bank-b", "bank-c"), "bank-c", false},
		{"bank writes another's ledger subject", "bank-a", LedgerSubject(secJob, "bank-b"), AuditorID, false},
		{"bank publishes the global model", "bank-a", s(KindModel, "all"), "bank-b", false},
		{"bank publishes a personalized model", "bank-a", s(KindModel, "bank-b"), "bank-b", false},
		{"bank opens a round", "bank-a", s(KindRound), "bank-b", false},
		{"bank ends the job", "bank-a", s(KindDone), "bank-b", false},
		{"aggregator publishes a personalized model", AggregatorID, s(KindModel, "bank-b"), "bank-b", true},
		{"aggregator writes a bank's ledger subject", AggregatorID, LedgerSubject(secJob, "bank-b"), AuditorID, false},
		{"aggregator sends embeddings", AggregatorID, s(KindEmb, "bank-a", "bank-c"), "bank-c", false},
		{"auditor opens a round", AuditorID, s(KindRound), "bank-b", false},
		{"auditor reports metrics", AuditorID, s(KindMetrics, "bank-a"), AggregatorID, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			who, obs := ps[tc.who], ps[tc.observer]
			tag, probe := fmt.Sprintf("fence-%d", i), fmt.Sprintf("probe-%d", i)
			who.publish(t, tc.subject, probe)
			// The auditor may publish nothing to fence with: for it the
			// server's refusal alone is checked.
			if tc.who != AuditorID {
				who.publish(t, fenceFor(tc.observer, tc.who), tag)
				who.flush(t)
				got := append(obs.awaitFence(t, tag), drain(seen[tc.observer])...)
				if delivered := contains(got, tc.subject+" "+probe); delivered != tc.allowed {
					t.Fatalf("%s published on %s: delivered to %s=%v, want %v", tc.who, tc.subject, tc.observer, delivered, tc.allowed)
				}
			}
			if denied := refused(who.violations(t), "Publish", tc.subject); denied == tc.allowed {
				t.Fatalf("%s publishing on %s: refused=%v, want %v", tc.who, tc.subject, denied, !tc.allowed)
			}
		})
	}
}

// Hello is request/reply: the agent hears the aggregator's answer in its
// own inbox, and the aggregator may answer without publish rights on any
// inbox. A key the server does not know cannot log in.
func TestPermissionsHelloAndLogin(t *testing.T) {
	e := startSecureServer(t)
	agg, bank := e.connect(t, AggregatorID), e.connect(t, "bank-a")
	sub, err := agg.nc.Subscribe(Subject(secJob, KindHello, "*"), func(m *nats.Msg) { m.Respond([]byte("welcome " + m.Subject)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	agg.flush(t)
	reply, err := bank.nc.Request(Subject(secJob, KindHello, "bank-a"), []byte("hi"), 5*time.Second)
	if err != nil {
		t.Fatalf("hello: %v (bank violations %v, aggregator violations %v)", err, bank.violations(t), agg.violations(t))
	}
	if string(reply.Data) != "welcome "+Subject(secJob, KindHello, "bank-a") {
		t.Fatalf("reply %q", reply.Data)
	}
	if v := append(bank.violations(t), agg.violations(t)...); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}

	// A stranger's key, valid but not in the configuration.
	stranger, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/stranger.nk"
	c, _ := stranger.Credential("bank-a")
	if err := WriteSeedFile(path, secJob, c); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	nc, err := Connect(e.srv.ClientURL(), ConnectOptions{Creds: path, MaxReconnects: 1, OnError: func(err error) { errs <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := nc.FlushWithContext(ctx); err == nil {
		t.Fatal("a key unknown to the server logged in")
	}
	if nc.IsConnected() {
		t.Fatal("connected with an unknown key")
	}
}

// The ledger under permissions: only the aggregator creates the stream; a
// bank appends its own entries and reads the ledger (its gate replays it)
// but cannot append as another bank, delete or purge the stream, or create
// a stream of its own; the auditor reads and cannot append.
func TestPermissionsLedger(t *testing.T) {
	e := startSecureServer(t)
	agg, bank, aud := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, AuditorID)
	ctx := context.Background()
	stream := LedgerStreamName(secJob)
	// Refused JetStream requests go unanswered: keep their wait short.
	short := JSLedgerOptions{Timeout: 300 * time.Millisecond}

	if _, err := OpenJetStreamLedger(ctx, bank.nc, secJob, short); err == nil {
		t.Fatal("a bank created the ledger stream")
	}
	if v := bank.violations(t); !refused(v, "Publish", "$JS.API.STREAM.CREATE."+stream) {
		t.Fatalf("bank creating the stream: violations %v", v)
	}
	if _, err := OpenJetStreamLedger(ctx, agg.nc, secJob, JSLedgerOptions{}); err != nil {
		t.Fatalf("aggregator creating the stream: %v (violations %v)", err, agg.violations(t))
	}
	l, err := OpenJetStreamLedger(ctx, bank.nc, secJob, short)
	if err != nil {
		t.Fatalf("bank binding to the stream: %v (violations %v)", err, bank.violations(t))
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-a", 1)); err != nil {
		t.Fatalf("bank appending its entry: %v (violations %v)", err, bank.violations(t))
	}
	if err := l.Append(ctx, modelEntry(secJob, "bank-b", 1)); err == nil {
		t.Fatal("bank-a appended an entry of bank-b")
	}
	if v := bank.violations(t); !refused(v, "Publish", LedgerSubject(secJob, "bank-b")) {
		t.Fatalf("bank appending as another: violations %v", v)
	}
	if got, err := l.Entries(ctx); err != nil || len(got) != 1 || got[0].Client != "bank-a" {
		t.Fatalf("bank reading the ledger: %v, %v (violations %v)", got, err, bank.violations(t))
	}

	js, err := jetstream.New(bank.nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		api string
		do  func(context.Context) error
	}{
		{"STREAM.DELETE." + stream, func(ctx context.Context) error { return js.DeleteStream(ctx, stream) }},
		{"STREAM.PURGE." + stream, func(ctx context.Context) error {
			s, err := js.Stream(ctx, stream)
			if err != nil {
				return err
			}
			return s.Purge(ctx)
		}},
		{"STREAM.CREATE.SPY", func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SPY", Subjects: []string{"gf." + secJob + ".emb.>"}})
			return err
		}},
	} {
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := tc.do(rctx)
		cancel()
		if err == nil {
			t.Fatalf("bank called $JS.API.%s", tc.api)
		}
		if v := bank.violations(t); !refused(v, "Publish", "$JS.API."+tc.api) {
			t.Fatalf("bank calling $JS.API.%s: %v, violations %v", tc.api, err, v)
		}
	}

	ro, err := OpenJetStreamLedger(ctx, aud.nc, secJob, JSLedgerOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("auditor binding: %v (violations %v)", err, aud.violations(t))
	}
	if got, err := ro.Entries(ctx); err != nil || len(got) != 1 {
		t.Fatalf("auditor reading: %v, %v (violations %v)", got, err, aud.violations(t))
	}
	if v := aud.violations(t); len(v) > 0 {
		t.Fatalf("auditor: violations %v", v)
	}
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	ajs, err := jetstream.New(aud.nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ajs.Publish(rctx, LedgerSubject(secJob, "bank-a"), []byte("{}")); err == nil {
		t.Fatal("the auditor appended to the ledger")
	}
	if v := aud.violations(t); !refused(v, "Publish", LedgerSubject(secJob, "bank-a")) {
		t.Fatalf("auditor appending: violations %v", v)
	}
}
