package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

const jsTestJob = "job-1" // the job of ledgertest.Entries

func jsConn(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := Connect(url, ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func openJSTestLedger(t testing.TB, nc *nats.Conn, job string, opts JSLedgerOptions) *JetStreamLedger {
	t.Helper()
	l, err := OpenJetStreamLedger(context.Background(), nc, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func jsStream(t testing.TB, nc *nats.Conn, job string) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(context.Background(), LedgerStreamName(job))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func appendAll(t testing.TB, l privacy.Ledger, es []privacy.Entry) {
	t.Helper()
	for _, e := range es {
		if err := l.Append(context.Background(), e); err != nil {
			t.Fatalf("append %s seq %d: %v", e.Client, e.Seq, err)
		}
	}
}

func checkEntries(t testing.TB, got, want []privacy.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !ledgertest.Equal(got[i], want[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func mustEntries(t testing.TB, l privacy.Ledger) []privacy.Entry {
	t.Helper()
	rd, err := privacy.ReadLedger(context.Background(), l, privacy.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Rejected) != 0 {
		t.Fatalf("records rejected: %v", rd.Rejected)
	}
	return rd.Entries
}

// modelEntry is a valid model release of client with sequence seq.
func modelEntry(job, client string, seq uint64) privacy.Entry {
	return privacy.Entry{Seq: seq, Job: job, Client: client, Channel: privacy.ChannelModel, Round: seq,
		Count: 1, Dim: 4, Sigma: 0.5, Clip: 1, Rho: 2, Time: time.Date(2026, 3, 1, 0, 0, int(seq), 0, time.UTC)}
}

func TestJSLedgerNames(t *testing.T) {
	for _, c := range []struct{ job, stream, subject string }{
		{"job-1", "GF_LEDGER_JOB_1", "gf.job-1.ledger.bank-3"},
		{"aml", "GF_LEDGER_AML", "gf.aml.ledger.bank-3"},
		{"a-b-c-9", "GF_LEDGER_A_B_C_9", "gf.a-b-c-9.ledger.bank-3"},
	} {
		if got := LedgerStreamName(c.job); got != c.stream {
			t.Errorf("LedgerStreamName(%q) = %q, want %q", c.job, got, c.stream)
		}
		if got := LedgerSubject(c.job, "bank-3"); got != c.subject {
			t.Errorf("LedgerSubject(%q) = %q, want %q", c.job, got, c.subject)
		}
	}
}

// The privacy package's conformance suite, each case on a fresh server.
func TestJSLedgerConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) privacy.Ledger {
		srv := startTestServer(t)
		return openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	})
}

func TestJSLedgerStreamConfig(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
	info, err := jsStream(t, nc, jsTestJob).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	if !c.DenyDelete || !c.DenyPurge || c.AllowRollup || c.Storage != jetstream.FileStorage ||
		c.Retention != jetstream.LimitsPolicy || c.Discard != jetstream.DiscardNew || c.MaxAge != 0 ||
		c.MaxMsgs > 0 || c.MaxBytes > 0 || c.Replicas != 1 || c.Duplicates != DefaultLedgerDuplicates ||
		len(c.Subjects) != 1 || c.Subjects[0] != "gf.job-1.ledger.>" {
		t.Errorf("stream config %+v", c)
	}
	// A second open binds to the same stream.
	openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
}

// Deletes and purges are refused by the server, and the deny flags cannot
// be turned off by a stream update.
func TestJSLedgerDenyDeleteAndPurge(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	l := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
	want := ledgertest.Entries()
	appendAll(t, l, want)

	ctx := context.Background()
	s := jsStream(t, nc, jsTestJob)
	js, _ := jetstream.New(nc)
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"DeleteMsg", func() error { return s.DeleteMsg(ctx, 2) }},
		{"SecureDeleteMsg", func() error { return s.SecureDeleteMsg(ctx, 1) }},
		{"Purge", func() error { return s.Purge(ctx) }},
		{"PurgeSubject", func() error { return s.Purge(ctx, jetstream.WithPurgeSubject(LedgerSubject(jsTestJob, "bank-3"))) }},
		{"UpdateAllowDelete", func() error {
			cfg := s.CachedInfo().Config
			cfg.DenyDelete = false
			_, err := js.UpdateStream(ctx, cfg)
			return err
		}},
		{"UpdateAllowPurge", func() error {
			cfg := s.CachedInfo().Config
			cfg.DenyPurge = false
			_, err := js.UpdateStream(ctx, cfg)
			return err
		}},
	} {
		if err := c.do(); err == nil {
			t.Errorf("%s succeeded on the ledger stream", c.name)
		}
	}
	checkEntries(t, mustEntries(t, l), want)
}

// A stream that could lose entries is refused, whoever created it.
func TestJSLedgerRefusesUnsafeStream(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		mutate func(*jetstream.StreamConfig)
		why    string
	}{
		{"deletes", func(c *jetstream.StreamConfig) { c.DenyDelete = false }, "deletes allowed"},
		{"purges", func(c *jetstream.StreamConfig) { c.DenyPurge = false }, "purges"},
		{"memory", func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }, "storage"},
		{"max-age", func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }, "expire"},
		{"interest", func(c *jetstream.StreamConfig) { c.Retention = jetstream.InterestPolicy }, "retention"},
		{"discard-old", func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = 1000, jetstream.DiscardOld }, "discard old"},
		{"subjects", func(c *jetstream.StreamConfig) { c.Subjects = []string{c.Subjects[0][:len(c.Subjects[0])-1] + "x"} }, "do not include"},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := "unsafe-" + c.name
			cfg := ledgerStreamConfig(job, JSLedgerOptions{Replicas: 1, Duplicates: time.Minute})
			c.mutate(&cfg)
			if _, err := js.CreateStream(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				_, err := OpenJetStreamLedger(context.Background(), nc, job, JSLedgerOptions{ReadOnly: ro})
				if !errors.Is(err, privacy.ErrLedger) || !strings.Contains(err.Error(), c.why) {
					t.Errorf("read-only %v: %v, want a refusal mentioning %q", ro, err, c.why)
				}
			}
		})
	}
}

// A new connection (and a new ledger value) sees every entry and continues
// each client's sequence from the stored state.
func TestJSLedgerReopen(t *testing.T) {
	srv := startTestServer(t)
	want := ledgertest.Entries()
	appendAll(t, openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{}), want)

	l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	checkEntries(t, mustEntries(t, l), want)

	// bank-3 is at seq 3: a replayed seq 1 is refused, repeating seq 3
	// stores nothing, seq 4 is taken.
	ctx := context.Background()
	if err := l.Append(ctx, want[0]); !errors.Is(err, privacy.ErrInvalid) {
		t.Errorf("replayed entry: %v, want ErrInvalid", err)
	}
	if err := l.Append(ctx, want[3]); err != nil {
		t.Errorf("repeated last entry: %v", err)
	}
	next := modelEntry(jsTestJob, "bank-3", 4)
	if err := l.Append(ctx, next); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, mustEntries(t, l), append(want, next))

	got, err := l.EntriesFor(ctx, "bank-10")
	if err != nil {
		t.Fatal(err)
	}
	var bank10 []privacy.Entry
	for _, e := range want {
		if e.Client == "bank-10" {
			bank10 = append(bank10, e)
		}
	}
	checkEntries(t, got, bank10)
	if got, err := l.EntriesFor(ctx, "nobody"); err != nil || len(got) != 0 {
		t.Errorf("EntriesFor an unknown client: %d entries, %v", len(got), err)
	}
}

// Two clients appending concurrently through their own connections: every
// entry is stored once, each client's entries in order.
func TestJSLedgerTwoClientsInterleave(t *testing.T) {
	srv := startTestServer(t)
	const n = 40
	clients := []string{"bank-1", "bank-2"}
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for _, c := range clients {
		l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(1); seq <= n; seq++ {
				if err := l.Append(context.Background(), modelEntry(jsTestJob, c, seq)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{ReadOnly: true})
	all := mustEntries(t, l)
	if len(all) != n*len(clients) {
		t.Fatalf("%d entries, want %d", len(all), n*len(clients))
	}
	next := map[string]uint64{}
	for _, e := range all {
		next[e.Client]++
		if e.Seq != next[e.Client] {
			t.Fatalf("client %s: seq %d, want %d", e.Client, e.Seq, next[e.Client])
		}
	}
	for _, c := range clients {
		got, err := l.EntriesFor(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]privacy.Entry, n)
		for i := range want {
			want[i] = modelEntry(jsTestJob, c, uint64(i+1))
		}
		checkEntries(t, got, want)
	}
}

// Entries survive a server shutdown and a new server on the same store.
func TestJSLedgerRestartDurability(t *testing.T) {
	dir := t.TempDir()
	srv, err := StartServer(ServerOptions{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := ledgertest.Entries()
	nc, err := Connect(srv.ClientURL(), ConnectOptions{})
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	l, err := OpenJetStreamLedger(context.Background(), nc, jsTestJob, JSLedgerOptions{})
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	for _, e := range want {
		if err := l.Append(context.Background(), e); err != nil {
			srv.Shutdown()
			t.Fatal(err)
		}
	}
	nc.Close()
	srv.Shutdown()

	srv2, err := StartServer(ServerOptions{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv2.Shutdown)
	l2 := openJSTestLedger(t, jsConn(t, srv2.ClientURL()), jsTestJob, JSLedgerOptions{ReadOnly: true})
	checkEntries(t, mustEntries(t, l2), want)
}

// An Append retried after its acknowledgement was lost succeeds without a
// second copy; a different entry under the same sequence is refused.
func TestJSLedgerRetryAfterLostAck(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	ctx := context.Background()
	js, _ := jetstream.New(nc)
	l := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
	e1, e2 := modelEntry(jsTestJob, "bank-3", 1), modelEntry(jsTestJob, "bank-3", 2)
	appendAll(t, l, []privacy.Entry{e1})

	// The first try of e2 reached the stream; its ack never came back.
	data, _ := json.Marshal(e2)
	if _, err := js.Publish(ctx, LedgerSubject(jsTestJob, "bank-3"), data, jetstream.WithMsgID("bank-3.2")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, e2); err != nil {
		t.Fatalf("retried append: %v", err)
	}
	// A raw retry of the same id is de-duplicated by the stream.
	ack, err := js.Publish(ctx, LedgerSubject(jsTestJob, "bank-3"), data, jetstream.WithMsgID("bank-3.2"))
	if err != nil || !ack.Duplicate {
		t.Errorf("republished id: ack %+v, %v; want a duplicate", ack, err)
	}
	checkEntries(t, mustEntries(t, l), []privacy.Entry{e1, e2})

	// Repeating the last entry, from this ledger or a fresh one, is a no-op
	// success; a different entry under its sequence number is refused.
	fresh := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	for _, r := range []*JetStreamLedger{l, fresh} {
		if err := r.Append(ctx, e2); err != nil {
			t.Errorf("repeated append of the last entry: %v", err)
		}
		changed := e2
		changed.Round = 99
		if err := r.Append(ctx, changed); !errors.Is(err, privacy.ErrInvalid) {
			t.Errorf("a different entry under the last seq: %v, want ErrInvalid", err)
		}
		if err := r.Append(ctx, e1); !errors.Is(err, privacy.ErrInvalid) {
			t.Errorf("repeating an older entry: %v, want ErrInvalid", err)
		}
	}
	checkEntries(t, mustEntries(t, l), []privacy.Entry{e1, e2})

	// A message under the id of bank-4's next entry, on another subject,
	// is not mistaken for it: the duplicate ack is refused.
	e4 := modelEntry(jsTestJob, "bank-4", 1)
	data4, _ := json.Marshal(e4)
	if _, err := js.Publish(ctx, LedgerSubject(jsTestJob, "bank-5"), data4, jetstream.WithMsgID("bank-4.1")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, e4); !errors.Is(err, privacy.ErrInvalid) || !strings.Contains(err.Error(), "taken") {
		t.Errorf("append whose id is taken on another subject: %v, want ErrInvalid", err)
	}

	// Another writer stored a different seq 3 first: ours is refused.
	other, mine := modelEntry(jsTestJob, "bank-3", 3), modelEntry(jsTestJob, "bank-3", 3)
	other.Sigma = 9
	appendAll(t, openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{}), []privacy.Entry{other})
	if err := l.Append(ctx, mine); !errors.Is(err, privacy.ErrInvalid) || !errors.Is(err, privacy.ErrChainMoved) {
		t.Errorf("append racing another writer: %v, want ErrInvalid and ErrChainMoved", err)
	}
	// ...and the ledger has caught up: seq 4 goes through.
	if err := l.Append(ctx, modelEntry(jsTestJob, "bank-3", 4)); err != nil {
		t.Fatal(err)
	}
	got, err := l.EntriesFor(ctx, "bank-3")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[2].Sigma != 9 {
		t.Errorf("entries after the race: %+v", got)
	}
}

// An agent killed with its ledger append of seq 4 in flight, restarted,
// and the append stored only after the restarted agent's gate read its
// chain at seq 3 (each life with its own connection and ledger value, as
// two processes): the restarted gate's own seq 4 is refused as a chain
// that has moved on. Of the same round and channel, the gate settles it as
// released already, accounted once, and carries on at seq 5; when the
// restarted life has moved on to the next round, the gate accounts the
// earlier life's round 4 and makes its release of round 5 after it, at
// seq 5, with the noise an uninterrupted life adds.
func TestJSLedgerGateSettlesAnEarlierLifesLateAppend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		round uint64 // the round the restarted life releases at seq 4
	}{
		{"of the round it releases", 4},
		{"of an earlier round", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startTestServer(t)
			ctx := context.Background()
			seed := uint64(3)
			cfg := privacy.Config{Job: jsTestJob, Client: "bank-3", Delta: 1e-5, Seed: &seed}
			// A clock that moves, as the agents' does: the two lives'
			// entries of round 4 differ in their time. (Byte for byte the
			// same entry would be the ledger's idempotent retry, and
			// succeed.)
			var ticks int
			clock := func() time.Time {
				ticks++
				return time.Date(2026, 3, 1, 0, 0, ticks, 0, time.UTC)
			}
			gate := func() *privacy.Gate {
				l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
				g, err := privacy.NewGate(ctx, cfg, l, clock)
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			model := func(round uint64) privacy.Request {
				return privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: []float32{3, 4}, Dim: 2, Sigma: 2, Clip: 1}
			}
			old := gate()
			for r := uint64(1); r <= 3; r++ {
				if _, err := old.Release(ctx, model(r)); err != nil {
					t.Fatal(err)
				}
			}
			restarted := gate() // reads the chain at seq 3
			late, err := old.Release(ctx, model(4))
			if err != nil || late.Entry().Seq != 4 {
				t.Fatalf("the earlier life's late append: seq %d, %v", late.Entry().Seq, err)
			}
			r, err := restarted.Release(ctx, model(tc.round))
			if tc.round == 4 {
				if !errors.Is(err, privacy.ErrAlreadyReleased) || !r.IsZero() {
					t.Fatalf("restarted release of round 4: %v, want ErrAlreadyReleased and nothing released", err)
				}
				if a, b := restarted.Spent(1), old.Spent(1); !reflect.DeepEqual(a, b) {
					t.Fatalf("restarted gate spent %+v, the earlier life %+v", a, b)
				}
				if r, err = restarted.Release(ctx, model(5)); err != nil {
					t.Fatalf("next release: %v", err)
				}
			}
			if err != nil || r.Entry().Seq != 5 || r.Entry().Round != 5 {
				t.Fatalf("release of round 5: seq %d, %v; want 5", r.Entry().Seq, err)
			}
			// The bits an uninterrupted life releases in round 5.
			ref := privacy.NewMemLedger()
			one, err := privacy.NewGate(ctx, cfg, ref, clock)
			if err != nil {
				t.Fatal(err)
			}
			for r := uint64(1); r <= 4; r++ {
				if _, err := one.Release(ctx, model(r)); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := one.Release(ctx, model(5)); err != nil || !reflect.DeepEqual(r.Data(), want.Data()) {
				t.Fatalf("released %v in round 5, an uninterrupted life %v (%v)", r.Data(), want.Data(), err)
			}
			l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{ReadOnly: true})
			rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{})
			if err != nil || len(rd.Entries) != 5 || len(rd.Breaks) != 0 || len(rd.Rejected) != 0 {
				t.Fatalf("ledger: %d entries, breaks %v, rejects %v, %v", len(rd.Entries), rd.Breaks, rd.Rejected, err)
			}
			for i, e := range rd.Entries {
				if e.Seq != uint64(i+1) || e.Round != uint64(i+1) {
					t.Fatalf("entry %d: seq %d round %d", i, e.Seq, e.Round)
				}
			}
		})
	}
}

// A stored message that is not a valid entry of its subject's chain is
// skipped by readers, reported with its stream sequence and reason, and
// blocks neither readers nor the writer of that subject.
func TestJSLedgerSkipsJunk(t *testing.T) {
	first := modelEntry(jsTestJob, "bank-3", 1)
	good, _ := json.Marshal(first)
	wrongClient, _ := json.Marshal(modelEntry(jsTestJob, "bank-9", 1))
	wrongJob, _ := json.Marshal(modelEntry("job-2", "bank-3", 1))
	invalid := modelEntry(jsTestJob, "bank-3", 1)
	invalid.Sigma = -1
	invalidData, _ := json.Marshal(invalid)
	for _, c := range []struct {
		name   string
		data   []byte
		reason privacy.RejectReason
	}{
		{"garbage", []byte("not json"), privacy.RejectMalformed},
		{"unknown-field", []byte(`{"seq":1,"bogus":true}`), privacy.RejectMalformed},
		{"trailing", append(append([]byte{}, good...), []byte(" {}")...), privacy.RejectMalformed},
		{"wrong-client", wrongClient, privacy.RejectMisfiled},
		{"wrong-job", wrongJob, privacy.RejectMisfiled},
		{"invalid", invalidData, privacy.RejectMalformed},
		{"replayed-seq", good, privacy.RejectOutOfChain},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := startTestServer(t)
			nc := jsConn(t, srv.ClientURL())
			l := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
			appendAll(t, l, []privacy.Entry{first})
			if _, err := l.js.Publish(context.Background(), LedgerSubject(jsTestJob, "bank-3"), c.data); err != nil {
				t.Fatal(err)
			}
			rd, err := privacy.ReadLedger(context.Background(), l, privacy.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rd.Entries) != 1 || len(rd.Rejected) != 1 || rd.Rejected[0].Pos != 2 || rd.Rejected[0].Reason != c.reason ||
				rd.Rejected[0].Where != "subject "+LedgerSubject(jsTestJob, "bank-3") {
				t.Fatalf("read %d entries, rejects %+v; want 1 and a %s reject at stream seq 2", len(rd.Entries), rd.Rejected, c.reason)
			}
			// The writer carries on past the junk, this ledger value and a
			// fresh one alike.
			links, _ := privacy.LinkEntries([]privacy.Entry{first, modelEntry(jsTestJob, "bank-3", 2), modelEntry(jsTestJob, "bank-3", 3)})
			if err := l.Append(context.Background(), links[1]); err != nil {
				t.Fatalf("append after junk: %v", err)
			}
			l2 := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
			if err := l2.Append(context.Background(), links[2]); err != nil {
				t.Fatalf("append by a fresh ledger after junk: %v", err)
			}
			got, err := l.EntriesFor(context.Background(), "bank-3")
			if err != nil || len(got) != 3 {
				t.Fatalf("EntriesFor after junk: %d entries, %v", len(got), err)
			}
		})
	}
}

func TestJSLedgerRefusals(t *testing.T) {
	srv := startTestServer(t)
	nc := jsConn(t, srv.ClientURL())
	ctx := context.Background()

	if _, err := OpenJetStreamLedger(ctx, nc, "missing", JSLedgerOptions{ReadOnly: true}); !errors.Is(err, privacy.ErrLedger) {
		t.Errorf("read-only open of a missing ledger: %v", err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.Stream(ctx, LedgerStreamName("missing")); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("a read-only open created the stream: %v", err)
	}
	for _, c := range []struct {
		job  string
		opts JSLedgerOptions
	}{
		{"Bad_Job", JSLedgerOptions{}},
		{"", JSLedgerOptions{}},
		{"job-1", JSLedgerOptions{Replicas: 7}},
		{"job-1", JSLedgerOptions{Timeout: -time.Second}},
	} {
		if _, err := OpenJetStreamLedger(ctx, nc, c.job, c.opts); !errors.Is(err, privacy.ErrInvalid) {
			t.Errorf("open %q %+v: %v, want ErrInvalid", c.job, c.opts, err)
		}
	}
	// Three replicas cannot be had from a single server.
	if _, err := OpenJetStreamLedger(ctx, nc, "job-3", JSLedgerOptions{Replicas: 3}); err == nil {
		t.Error("a 3-replica ledger opened on a single server")
	}

	l := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{})
	if err := l.Append(ctx, modelEntry("job-2", "bank-3", 1)); !errors.Is(err, privacy.ErrInvalid) ||
		!strings.HasPrefix(err.Error(), "bus: ledger append: ") {
		t.Errorf("entry of another job: %v, want ErrInvalid", err)
	}
	ro := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{ReadOnly: true})
	if err := ro.Append(ctx, modelEntry(jsTestJob, "bank-3", 1)); !errors.Is(err, privacy.ErrInvalid) {
		t.Errorf("append to a read-only ledger: %v, want ErrInvalid", err)
	}
	if es := mustEntries(t, l); len(es) != 0 {
		t.Errorf("refused appends stored %d entries", len(es))
	}
	if _, err := l.EntriesFor(ctx, "Bad"); !errors.Is(err, privacy.ErrInvalid) {
		t.Errorf("EntriesFor a bad client id: %v", err)
	}
}

// Entries of a longer ledger come back complete and in order.
func TestJSLedgerManyEntries(t *testing.T) {
	srv := startTestServer(t)
	l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	var want []privacy.Entry
	for seq := uint64(1); seq <= 600; seq++ {
		want = append(want, modelEntry(jsTestJob, fmt.Sprintf("bank-%d", seq%3), seq))
	}
	appendAll(t, l, want)
	checkEntries(t, mustEntries(t, l), want)
}

// Prepare reads a client's chain head before its first append: a client
// with entries continues its chain, a new client starts it, and a
// prepared head that another writer moved past is read again, not trusted.
func TestJSLedgerPrepare(t *testing.T) {
	srv := startTestServer(t)
	ctx := context.Background()
	want := ledgertest.Entries()
	appendAll(t, openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{}), want)

	l := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	for _, c := range []string{"bank-3", "bank-new"} {
		if err := l.Prepare(ctx, c); err != nil {
			t.Fatalf("Prepare(%s): %v", c, err)
		}
	}
	// Another writer appends bank-new's first entry after the prepare.
	other := openJSTestLedger(t, jsConn(t, srv.ClientURL()), jsTestJob, JSLedgerOptions{})
	if err := other.Append(ctx, modelEntry(jsTestJob, "bank-new", 1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, modelEntry(jsTestJob, "bank-3", 4)); err != nil {
		t.Errorf("bank-3 seq 4 after Prepare: %v", err)
	}
	if err := l.Append(ctx, modelEntry(jsTestJob, "bank-new", 1)); err != nil {
		t.Errorf("repeating the other writer's seq 1 exactly: %v, want success", err)
	}
	if err := l.Append(ctx, modelEntry(jsTestJob, "bank-new", 2)); err != nil {
		t.Errorf("bank-new seq 2: %v", err)
	}
	got, err := l.EntriesFor(ctx, "bank-new")
	if err != nil || len(got) != 2 {
		t.Fatalf("bank-new: %d entries, %v; want 2", len(got), err)
	}
	if err := l.Prepare(ctx, "Not Valid"); err == nil {
		t.Error("Prepare of an invalid id: no error")
	}
}
