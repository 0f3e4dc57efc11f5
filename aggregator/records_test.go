package aggregator

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

func ref(seq uint64, c byte) privacy.Ref {
	return privacy.Ref{Seq: seq, Digest: strings.Repeat(string([]byte{c}), 64)}
}

func updHead(id string, round uint64, sec float64, head privacy.Ref) UpdateIn {
	u := upd(id, round, sec, 1, 1, 1)
	u.Head = head
	return u
}

// kinds lists the actions' kinds in order, for the record's place among
// them.
func kinds(acts []Action) []string {
	var out []string
	for _, a := range acts {
		switch x := a.(type) {
		case RecordRound:
			out = append(out, "record")
		case OpenRound:
			out = append(out, "open")
		case RoundClosed:
			out = append(out, "close")
		case PublishModel:
			out = append(out, "model")
		case Finished:
			out = append(out, "finished")
		case ReplyJoin:
			_ = x
			out = append(out, "join")
		}
	}
	return out
}

// The machine asks for the start record before round 1 opens and for a
// round record at every close, after the close and before the models and
// the next opening, with every bank's latest reported head.
func TestMachineRecordsRounds(t *testing.T) {
	cases := []struct {
		name  string
		ev    Event
		kinds []string
		heads []privacy.Head // of the step's record, when it has one
	}{
		{"first join", join("a", 0), []string{"join"}, nil},
		{"second join opens", join("b", 1), []string{"join", "record", "open"}, []privacy.Head{}},
		{"a's update", updHead("a", 1, 2, ref(2, 'a')), nil, nil},
		{"b's update closes", updHead("b", 1, 3, ref(3, 'b')), []string{"close", "record", "model", "open"},
			[]privacy.Head{{Client: "a", Seq: 2, Digest: ref(2, 'a').Digest}, {Client: "b", Seq: 3, Digest: ref(3, 'b').Digest}}},
		// A replayed older head changes nothing; an invalid one is ignored.
		{"a replays", updHead("a", 1, 4, ref(1, 'c')), nil, nil},
		{"a's round 2", updHead("a", 2, 5, ref(4, 'd')), nil, nil},
		{"b without a head", updHead("b", 2, 6, privacy.Ref{Seq: 9, Digest: "bad"}), []string{"close", "record", "model", "open"},
			[]privacy.Head{{Client: "a", Seq: 4, Digest: ref(4, 'd').Digest}, {Client: "b", Seq: 3, Digest: ref(3, 'b').Digest}}},
		{"a's round 3", updHead("a", 3, 7, ref(5, 'e')), nil, nil},
		{"the last close", updHead("b", 3, 8, ref(6, 'f')), []string{"close", "record", "model", "finished"},
			[]privacy.Head{{Client: "a", Seq: 5, Digest: ref(5, 'e').Digest}, {Client: "b", Seq: 6, Digest: ref(6, 'f').Digest}}},
	}
	m := newTestMachine(t, Config{})
	for _, tc := range cases {
		acts := m.Step(tc.ev)
		got := kinds(acts)
		if !reflect.DeepEqual(got, tc.kinds) && (len(got) != 0 || len(tc.kinds) != 0) {
			t.Fatalf("%s: actions %v, want %v", tc.name, got, tc.kinds)
		}
		if r, ok := find[RecordRound](acts); ok {
			if len(r.Heads) == 0 {
				r.Heads = []privacy.Head{}
			}
			if !reflect.DeepEqual(r.Heads, tc.heads) {
				t.Fatalf("%s: record of round %d with heads %+v, want %+v", tc.name, r.Round, r.Heads, tc.heads)
			}
		}
	}
	last, ok := m.LastRecord()
	if !ok || last.Round != 3 || len(last.Heads) != 2 {
		t.Fatalf("last record %+v %v, want round 3 with 2 heads", last, ok)
	}
}

// Heads survive a snapshot, and LastRecord says which record the state
// calls for at each stage.
func TestMachineRecordsSnapshot(t *testing.T) {
	m := newTestMachine(t, Config{})
	if _, ok := m.LastRecord(); ok {
		t.Fatal("a record before round 1 opened")
	}
	m.Step(join("a", 0))
	m.Step(join("b", 1))
	if r, ok := m.LastRecord(); !ok || r.Round != 0 {
		t.Fatalf("open round 1: last record %+v %v, want the start record", r, ok)
	}
	m.Step(updHead("a", 1, 2, ref(7, '1')))
	m.Step(updHead("b", 1, 3, ref(8, '2')))
	snap := m.Snapshot()
	b, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(back)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Heads(), m.Heads()) || len(r.Heads()) != 2 {
		t.Fatalf("heads %+v after a snapshot, want %+v", r.Heads(), m.Heads())
	}
	if lr, ok := r.LastRecord(); !ok || lr.Round != 1 {
		t.Fatalf("round 2 open: last record %+v %v, want round 1's", lr, ok)
	}
	bad := back
	bad.Heads = []privacy.Head{back.Heads[1], back.Heads[0]}
	if _, err := Restore(bad); err == nil {
		t.Fatal("restored unsorted heads")
	}
	bad.Heads = []privacy.Head{{Client: "a", Seq: 0, Digest: back.Heads[0].Digest}}
	if _, err := Restore(bad); err == nil {
		t.Fatal("restored a head that names no entry")
	}
}

// Anchored stamps the announcements and nothing else.
func TestAnchored(t *testing.T) {
	a := ref(3, '9')
	for _, tc := range []struct {
		in   Action
		want Action
	}{
		{ReplyJoin{Client: "a"}, ReplyJoin{Client: "a", Anchor: a}},
		{OpenRound{Round: 2}, OpenRound{Round: 2, Anchor: a}},
		{Finished{Rounds: 3}, Finished{Rounds: 3, Anchor: a}},
		{PublishModel{Round: 2}, PublishModel{Round: 2}},
	} {
		if got := Anchored(tc.in, a); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Anchored(%#v) = %#v", tc.in, got)
		}
	}
}

// A restarted server appends the record its checkpoint calls for when
// its chain lacks it (the crash fell between the checkpoint and the
// append), once, and announces it; a chain that holds it gets nothing.
func TestServerCatchesUpRecords(t *testing.T) {
	ctx := context.Background()
	ledger := privacy.NewMemLedger()
	gate := func() *privacy.Gate {
		g, err := privacy.NewGate(ctx, privacy.Config{Job: "j", Client: privacy.AggregatorClient, Delta: 1e-5}, ledger, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	m := newTestMachine(t, Config{})
	m.Step(join("a", 0))
	m.Step(join("b", 1))
	if _, err := gate().RecordRound(ctx, 0, nil); err != nil { // the start record made it
		t.Fatal(err)
	}
	m.Step(updHead("a", 1, 2, ref(1, 'a')))
	m.Step(updHead("b", 1, 3, ref(1, 'b'))) // round 1's record did not
	for life, want := range []int{2, 2} {
		srv, err := NewServer(ServerConfig{Job: "j", Round: m.cfg, Log: zerolog.Nop(), Ledger: gate()}, bus.NewInmemNetwork().Transport())
		if err != nil {
			t.Fatal(err)
		}
		srv.machine = m
		if err := srv.startRecords(ctx); err != nil {
			t.Fatal(err)
		}
		rd, err := privacy.ReadLedger(ctx, ledger, privacy.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		recs := privacy.AggregatorRecords(rd, "j")
		if len(recs) != want || recs[len(recs)-1].Round != 1 || len(recs[len(recs)-1].Heads) != 2 {
			t.Fatalf("life %d: records %+v, want the start record and round 1's with both heads", life, recs)
		}
		if a := srv.anchor(); a.Seq != 2 {
			t.Fatalf("life %d: anchor %+v, want the round-1 record (seq 2)", life, a)
		}
	}
}
