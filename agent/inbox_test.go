package agent

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/inbox"
	"graphfed/privacy"
)

// exLearner is a learner that exchanges embeddings with fixed neighbours;
// the inbox only asks for them.
type exLearner struct{ peers []string }

func (l *exLearner) SchemaHash() string                            { return "ex-1" }
func (l *exLearner) NumParams() int                                { return 1 }
func (l *exLearner) TrainSize() int                                { return 1 }
func (l *exLearner) Init(uint64)                                   {}
func (l *exLearner) Params() []float32                             { return []float32{0} }
func (l *exLearner) SetParams([]float32) error                     { return nil }
func (l *exLearner) Train(int) float64                             { return 0 }
func (l *exLearner) Evaluate() map[string]float64                  { return nil }
func (l *exLearner) Neighbours() []string                          { return l.peers }
func (l *exLearner) Boundary(string) ([]int64, []float32, int)     { return nil, nil, 0 }
func (l *exLearner) Receive(string, []int64, []float32, int) error { return nil }

const inboxJob = "j"

// inboxAgent is bank-1 of job j with neighbours bank-0 and bank-2, on an
// in-memory transport (never run: the tests drive enqueue and next).
func inboxAgent(t *testing.T, lim InboxLimits, ring *bus.Keyring) *Agent {
	t.Helper()
	ctx := context.Background()
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: inboxJob, Client: "bank-1", Delta: 1e-4}, privacy.NewMemLedger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Job: inboxJob, Client: "bank-1", Log: zerolog.Nop(), Inbox: lim, Keyring: ring},
		bus.NewInmemNetwork().Transport(), &exLearner{peers: []string{"bank-0", "bank-2"}}, gate)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testRing is a keyring of the aggregator and banks 0 to 3.
func testRing(t *testing.T) *bus.Keyring {
	t.Helper()
	parties := []bus.Party{{ID: bus.AggregatorID, Role: bus.RoleAggregator}}
	for _, id := range []string{"bank-0", "bank-1", "bank-2", "bank-3"} {
		parties = append(parties, bus.Party{ID: id, Role: bus.RoleBank})
	}
	for i := range parties {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		if parties[i].PublicKey, err = kp.PublicKey(); err != nil {
			t.Fatal(err)
		}
	}
	ring, err := bus.NewKeyring(inboxJob, parties)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func TestInboxSenderOf(t *testing.T) {
	withRing, without := inboxAgent(t, InboxLimits{}, testRing(t)), inboxAgent(t, InboxLimits{}, nil)
	s := func(kind bus.Kind, parts ...string) string { return bus.Subject(inboxJob, kind, parts...) }
	tests := []struct {
		subject           string
		withRing, without string
	}{
		{s(bus.KindRound), bus.AggregatorID, bus.AggregatorID},
		{s(bus.KindModel, "all"), bus.AggregatorID, bus.AggregatorID},
		{s(bus.KindModel, "bank-1"), bus.AggregatorID, bus.AggregatorID},
		{s(bus.KindDone), bus.AggregatorID, bus.AggregatorID},
		{s(bus.KindEmb, "bank-0", "bank-1"), "bank-0", "bank-0"},   // a neighbour
		{s(bus.KindEmb, "bank-3", "bank-1"), "bank-3", unknownEmb}, // in the keyring, not linked
		{s(bus.KindEmb, "made-up", "bank-1"), unknownEmb, unknownEmb},
		{s(bus.KindEmb, bus.AggregatorID, "bank-1"), unknownEmb, unknownEmb}, // never the aggregator's queue
		{"gf.j.emb.Bad!.bank-1", unknownSubject, unknownSubject},
		{s(bus.KindUpdate, "bank-0"), unknownSubject, unknownSubject},
	}
	for _, tc := range tests {
		if got := withRing.senderOf(tc.subject); got != tc.withRing {
			t.Errorf("with a keyring, senderOf(%q) = %q, want %q", tc.subject, got, tc.withRing)
		}
		if got := without.senderOf(tc.subject); got != tc.without {
			t.Errorf("without a keyring, senderOf(%q) = %q, want %q", tc.subject, got, tc.without)
		}
	}
}

// TestInboxFlood: each case floods bank-1's inbox from one kind of sender
// while the aggregator's messages and the other neighbour's embedding
// arrive in between. The flood loses only its own messages, counted
// against its sender; the inbox never holds more than its bound.
func TestInboxFlood(t *testing.T) {
	const payload = 100_000
	lim := InboxLimitsFor(payload)
	per := lim.Neighbour.Bytes
	tests := []struct {
		name     string
		ring     bool
		from     []string // the flood's senders, in turn
		size     int      // bytes of each flood message
		charged  string   // whom the drops are charged to
		wantKept int      // flood messages kept
	}{
		{"a neighbour (the attacker holds its key), by bytes", true, []string{"bank-0"}, 90_000, "bank-0", 2},
		{"a neighbour, by messages", true, []string{"bank-0"}, 100, "bank-0", lim.Neighbour.Msgs},
		{"a bank of the keyring without a link", true, []string{"bank-3"}, 90_000, "bank-3", 2},
		{"made-up senders, grouped", false, []string{"x-1", "x-2", "x-3", "x-4"}, 90_000, unknownEmb, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			junk := make([]byte, tc.size)
			var ring *bus.Keyring
			if tc.ring {
				ring = testRing(t)
			}
			a := inboxAgent(t, lim, ring)
			agg := []string{bus.Subject(inboxJob, bus.KindModel, "all"), bus.Subject(inboxJob, bus.KindRound)}
			const flood = 60
			for i := range flood {
				from := tc.from[i%len(tc.from)]
				a.enqueue(bus.Msg{Subject: bus.Subject(inboxJob, bus.KindEmb, from, "bank-1"), Data: junk})
				if i == flood/2 {
					for _, s := range agg {
						a.enqueue(bus.Msg{Subject: s, Data: junk})
					}
					a.enqueue(bus.Msg{Subject: bus.Subject(inboxJob, bus.KindEmb, "bank-2", "bank-1"), Data: junk})
				}
			}
			r := a.InboxReport()
			st := r.Senders[tc.charged]
			if st.Received != flood || st.Dropped != uint64(flood-tc.wantKept) {
				t.Fatalf("%s: %+v, want %d received and %d dropped", tc.charged, st, flood, flood-tc.wantKept)
			}
			if st.PeakBytes > per {
				t.Fatalf("%s had %d bytes waiting, over its %d", tc.charged, st.PeakBytes, per)
			}
			for _, s := range []string{bus.AggregatorID, "bank-2"} {
				if r.Senders[s].Dropped != 0 {
					t.Fatalf("%s lost messages to the flood: %+v", s, r.Senders)
				}
			}
			if r.PeakBytes > r.BoundBytes || r.BoundBytes != (2+6)*per {
				t.Fatalf("peak %d bytes, bound %d (want %d)", r.PeakBytes, r.BoundBytes, (2+6)*per)
			}
			// Served in arrival order: after the flood messages queued
			// before them, which the bound keeps few.
			var order []string
			for {
				m, _, err := a.nextOrWake(withDeadline(t, 10*time.Millisecond))
				if err != nil {
					break
				}
				order = append(order, a.senderOf(m.Subject))
			}
			want := slices.Repeat([]string{tc.charged}, min(tc.wantKept, flood/2+1))
			want = append(want, bus.AggregatorID, bus.AggregatorID, "bank-2")
			want = append(want, slices.Repeat([]string{tc.charged}, tc.wantKept-min(tc.wantKept, flood/2+1))...)
			if !slices.Equal(order, want) {
				t.Fatalf("served %v, want %v", order, want)
			}
		})
	}
}

func withDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestInboxRoundsAndStopBesideFlood: with a neighbour's flood queued, a
// newer round opening is still seen ahead of its turn (newerRoundQueued),
// and the aggregator's stop notice still ends the run at once.
func TestInboxRoundsAndStopBesideFlood(t *testing.T) {
	a := inboxAgent(t, InboxLimitsFor(1000), nil)
	run, err := bus.NewRunID(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.runs.Admitted(run, nil); err != nil {
		t.Fatal(err)
	}
	var cause error
	a.interrupt = func(err error) { cause = err }
	for range 100 {
		a.enqueue(bus.Msg{Subject: bus.Subject(inboxJob, bus.KindEmb, "bank-0", "bank-1"), Data: make([]byte, 900)})
	}
	seal := func(kind bus.Kind, round uint64, body any) []byte {
		data, err := bus.Seal(bus.Envelope{Job: inboxJob, Kind: kind, From: bus.AggregatorID, Round: round, Seq: round + 1}, body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a.enqueue(bus.Msg{Subject: bus.Subject(inboxJob, bus.KindRound), Data: seal(bus.KindRound, 3, &bus.RoundOpen{Round: 3, Run: run})})
	if !a.newerRoundQueued(2) || a.newerRoundQueued(3) {
		t.Fatal("the queued round 3 opening is not seen after round 2, or seen after round 3")
	}
	a.enqueue(bus.Msg{Subject: bus.Subject(inboxJob, bus.KindDone), Data: seal(bus.KindDone, 3, &bus.Done{Rounds: 2, Run: run, Stopped: "signal"})})
	var stopped *JobStopped
	if !errors.As(cause, &stopped) || stopped.Reason != "signal" {
		t.Fatalf("the stop notice beside the flood interrupted with %v", cause)
	}
	if st := a.InboxReport().Senders; st[bus.AggregatorID].Dropped != 0 || st["bank-0"].Dropped == 0 {
		t.Fatalf("counters %+v: want the flood dropped, nothing of the aggregator's", st)
	}
}

// TestInboxLimitsFor: a zero Config.Inbox is derived from the payload
// limit; a complete one is taken as given.
func TestInboxLimitsFor(t *testing.T) {
	given := InboxLimits{Aggregator: inbox.Allowance{Msgs: 1, Bytes: 10}, Neighbour: inbox.Allowance{Msgs: 1, Bytes: 20},
		Others: inbox.Limits{SenderMsgs: 1, SenderBytes: 5, TotalBytes: 7}}
	tests := []struct {
		name string
		cfg  InboxLimits
		want int // the bound of bank-1's inbox, two neighbours
	}{
		{"derived from the in-memory transport's payload limit", InboxLimits{}, 8 * (2*bus.DefaultMaxPayload + 64<<10)},
		{"incomplete: derived", InboxLimits{Neighbour: inbox.Allowance{Msgs: 1}}, 8 * (2*bus.DefaultMaxPayload + 64<<10)},
		{"given", given, 10 + 2*20 + 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := inboxAgent(t, tc.cfg, nil).InboxReport().BoundBytes; got != tc.want {
				t.Fatalf("bound %d, want %d", got, tc.want)
			}
		})
	}
}
