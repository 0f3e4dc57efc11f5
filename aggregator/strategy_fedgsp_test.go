package aggregator

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// The personalized mixing of a close, by hand, on three clients with
// K = 1 and Dim = 2 (parameters c_0 c_0 | c_1 c_1 | mlp): c_0 and the MLP
// through W, c_1 through W^(1), each row renormalised over the round's
// contributors (a plain mean when it has no weight on them).
func TestFedGSPMixingThreeClients(t *testing.T) {
	w := []float64{0.5, 0.25, 0.25, 0, 0.5, 0.5, 1, 0, 0}
	w1 := []float64{0, 1, 0, 0.5, 0, 0.5, 0.2, 0.3, 0.5}
	theta := map[string][]float32{
		"a": {1, 2, 3, 4, 5},
		"b": {10, 20, 30, 40, 50},
		"c": {100, 200, 300, 400, 500},
	}
	tests := []struct {
		name string
		in   []Contribution
		want map[string][]float32
	}{
		{"all in", []Contribution{{Client: "a", Weight: 1, Params: theta["a"]}, {Client: "b", Weight: 1, Params: theta["b"]}, {Client: "c", Weight: 1, Params: theta["c"]}},
			map[string][]float32{
				"a": {28, 56, 30, 40, 140},
				"b": {55, 110, 151.5, 202, 275},
				"c": {1, 2, 159.6, 212.8, 5},
			}},
		{"b absent", []Contribution{{Client: "a", Weight: 1, Params: theta["a"]}, {Client: "c", Weight: 1, Params: theta["c"]}},
			map[string][]float32{
				"a": {34, 68, 151.5, 202, 170},           // W row over {a, c}; W^(1) row has no weight on them: the mean
				"c": {1, 2, 150.6 / 0.7, 200.8 / 0.7, 5}, // W^(1): (0.2·c_a + 0.5·c_c)/0.7
			}},
		{"a withheld", []Contribution{{Client: "a"}, {Client: "b", Weight: 1, Params: theta["b"]}, {Client: "c", Weight: 1, Params: theta["c"]}},
			map[string][]float32{
				"a": {55, 110, 30, 40, 275},
				"b": {55, 110, 300, 400, 275},
				"c": {55, 110, 198.75, 265, 275}, // W row only on a: the mean of b and c; W^(1) (0.3·b + 0.5·c)/0.8
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFedGSPStrategy(FedGSPConfig{Gamma: 1, Beta: 1, Orders: 1, Dim: 2})
			for _, id := range []string{"a", "b", "c"} {
				s.Join(Join{Client: id})
			}
			s.graphs = [][]float64{slices.Clone(w), slices.Clone(w1)}
			out := s.mix(CloseInput{Round: 3, NumParams: 5, In: tc.in})
			if len(out.Models) != len(tc.want) {
				t.Fatalf("%d models, want %d: %+v", len(out.Models), len(tc.want), out.Models)
			}
			for _, p := range out.Models {
				want := tc.want[p.To]
				for i := range want {
					if math.Abs(float64(p.Params[i]-want[i])) > 1e-4 {
						t.Fatalf("model for %s: %v, want %v", p.To, p.Params, want)
					}
				}
			}
		})
	}
}

// gspT0 is the fedgsp machine tests' clock.
var gspT0 = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

// gspDesc is a descriptor with K = 1, kpr = 1, Dim = 4 whose sharing
// directions (blocks A, C) are unit vector sp and complementing ones
// (B, D) unit vector cp.
func gspDesc(sp, cp int) *Descriptor {
	rows := make([]float32, 16)
	rows[sp], rows[4+cp], rows[8+sp], rows[12+cp] = 1, 1, -1, 1 // signs are arbitrary
	return &Descriptor{Orders: 1, Principal: 1, Dim: 4, Rows: rows}
}

func gspCfg() Config {
	return Config{Algo: AlgoFedGSP, Rounds: 6, MinClients: 3, RoundTimeout: time.Minute,
		FedGSP: FedGSPConfig{Gamma: 1.6, Alpha: 0.25, Beta: 2.2, GraphRounds: 3}}
}

func gspUpdate(id string, r uint64, d *Descriptor) UpdateIn {
	p := make([]float32, 10)
	for i := range p {
		p[i] = float32(int(id[0]-'a')*10+i) + float32(r)/8
	}
	return UpdateIn{Client: id, Round: r, Weight: 1, Params: p, Descriptors: d, Now: gspT0}
}

// gspMidRound runs a fedgsp job into round 2: a and b send their
// descriptors with round 1, c misses round 1 (deadline) and its late
// round-1 update brings its descriptors in round 2, in which a's update
// is pending. It returns the machine and the events that finish the job.
func gspMidRound(t *testing.T) (*Machine, []Event) {
	t.Helper()
	m, err := NewMachine(gspCfg())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		m.Step(Join{Client: id, SchemaHash: "h", NumParams: 10, Weight: 1, Now: gspT0})
	}
	m.Step(gspUpdate("a", 1, gspDesc(0, 0)))
	m.Step(gspUpdate("b", 1, gspDesc(0, 1)))
	m.Step(Tick{Now: gspT0.Add(2 * time.Minute)})
	if acts := m.Step(gspUpdate("c", 1, gspDesc(1, 2))); len(actionsOf[Dropped](acts)) != 1 || actionsOf[Dropped](acts)[0].Reason != "late" {
		t.Fatalf("c's late update: %+v", acts)
	}
	m.Step(gspUpdate("a", 2, nil))
	var then []Event
	then = append(then, gspUpdate("b", 2, nil), gspUpdate("c", 2, nil))
	for r := uint64(3); r <= 6; r++ {
		for _, id := range []string{"a", "b", "c"} {
			then = append(then, gspUpdate(id, r, nil))
		}
	}
	return m, then
}

func gspOf(m *Machine) *fedgspStrategy { return m.strategy.(*fedgspStrategy) }

// The graphs learn in rounds 1 and 2 (GraphRounds 3), from descriptors
// that came late too, then freeze and forget the descriptors.
func TestFedGSPGraphsFreezeAfterGraphRounds(t *testing.T) {
	m, then := gspMidRound(t)
	s := gspOf(m)
	if len(s.desc) != 3 || s.orders != 1 || s.dim != 4 || len(s.graphs) != 2 {
		t.Fatalf("descriptors %d, layout %d×%d, %d graphs; want c's late descriptors kept", len(s.desc), s.orders, s.dim, len(s.graphs))
	}
	// Round 1 learned on a and b only (c had sent nothing): c's row is
	// still the initial one.
	if w := s.Graph(0); w[6] != 0.5 || w[7] != 0.5 || w[0] == 0 {
		t.Fatalf("W after round 1: %v", w)
	}
	var frozen [][]float64
	for i, ev := range then {
		acts := m.Step(ev)
		rc := actionsOf[RoundClosed](acts)
		if len(rc) == 0 {
			continue
		}
		switch r := rc[0].Round; {
		case r == 2:
			if len(s.desc) != 0 || !s.frozen {
				t.Fatalf("after round 2 the graphs must freeze and drop the descriptors")
			}
			frozen = [][]float64{s.Graph(0), s.Graph(1)}
			// a and b share alike, c does not: a leans on b, not c.
			if w := frozen[0]; !(w[1] > w[2]) {
				t.Fatalf("W after round 2 %v: a should lean on b", w)
			}
		case r > 2:
			if !reflect.DeepEqual([][]float64{s.Graph(0), s.Graph(1)}, frozen) {
				t.Fatalf("event %d: graphs moved in round %d after freezing", i, r)
			}
			if ms := actionsOf[PublishModel](acts); len(ms) != 3 {
				t.Fatalf("round %d published %d models, want one per client", r, len(ms))
			}
		}
	}
	if !m.Finished() || frozen == nil {
		t.Fatal("the job did not run to its end")
	}
	// Descriptors arriving after the freeze are ignored.
	s.takeDescriptors("zz", *gspDesc(0, 0))
	if len(s.desc) != 0 {
		t.Fatal("descriptors kept after the freeze")
	}
}

// Descriptors that do not fit are dropped with their update, with a
// counted reason, and leave nothing behind.
func TestFedGSPDropsBadDescriptors(t *testing.T) {
	nan := gspDesc(0, 0)
	nan.Rows[3] = float32(math.NaN())
	tests := []struct {
		name string
		d    *Descriptor
	}{
		{"rows of another length", &Descriptor{Orders: 1, Principal: 1, Dim: 4, Rows: make([]float32, 15)}},
		{"coefficients larger than the model", &Descriptor{Orders: 4, Principal: 1, Dim: 4, Rows: make([]float32, 64)}},
		{"another dimension than the layout", &Descriptor{Orders: 1, Principal: 1, Dim: 2, Rows: make([]float32, 8)}},
		{"another principal count", &Descriptor{Orders: 1, Principal: 2, Dim: 4, Rows: make([]float32, 32)}},
		{"zero orders", &Descriptor{Orders: 0, Principal: 1, Dim: 4, Rows: make([]float32, 0)}},
		{"not finite", nan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMachine(gspCfg())
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b", "c"} {
				m.Step(Join{Client: id, SchemaHash: "h", NumParams: 10, Weight: 1, Now: gspT0})
			}
			m.Step(gspUpdate("a", 1, gspDesc(0, 0))) // fixes the layout 1×1×4
			acts := m.Step(gspUpdate("b", 1, tc.d))
			if d := actionsOf[Dropped](acts); len(d) != 1 || d[0].Reason != ReasonDescriptorShape {
				t.Fatalf("actions %+v, want a drop for %q", acts, ReasonDescriptorShape)
			}
			if _, ok := gspOf(m).desc["b"]; ok || len(m.pending) != 1 {
				t.Fatalf("a dropped update left descriptors or a pending update behind")
			}
		})
	}
}

// A fedgsp machine restored from a mid-round snapshot (descriptors kept,
// graphs learned once, an update pending) answers every later event
// exactly as the original, through the snapshot's encoding.
func TestFedGSPSnapshotRestoresMidRound(t *testing.T) {
	m, then := gspMidRound(t)
	snap := m.Snapshot()
	b, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, snap) {
		t.Fatalf("snapshot changed through its encoding")
	}
	r, err := Restore(dec)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshot(); !reflect.DeepEqual(got, snap) {
		t.Fatalf("restored machine's snapshot differs:\n got %s\nwant %s", got.Strategy, snap.Strategy)
	}
	models := 0
	for i, ev := range then {
		want, got := m.Step(ev), r.Step(ev)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: restored machine answered\n%#v\nwant\n%#v", i, got, want)
		}
		models += len(actionsOf[PublishModel](want))
	}
	if !m.Finished() || models != 15 {
		t.Fatalf("the continuation is too short to tell: finished %v, %d models", m.Finished(), models)
	}
}

func TestFedGSPRestoreRefusesBadState(t *testing.T) {
	good := func() Snapshot {
		m, _ := gspMidRound(t)
		return m.Snapshot()
	}
	state := func(s *Snapshot) map[string]any {
		var st map[string]any
		if err := json.Unmarshal(s.Strategy, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	set := func(s *Snapshot, st map[string]any) {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		s.Strategy = b
	}
	edit := func(f func(map[string]any)) func(*Snapshot) {
		return func(s *Snapshot) { st := state(s); f(st); set(s, st) }
	}
	tests := []restoreRefusal{
		{"a stranger", edit(func(st map[string]any) { st["ids"] = []string{"a", "b", "zz"} }), "never joined"},
		{"unsorted clients", edit(func(st map[string]any) { st["ids"] = []string{"b", "a", "c"} }), "sorted"},
		{"a graph too short", edit(func(st map[string]any) { st["graphs"].([]any)[0] = "AAAA" }), "bytes"},
		{"graphs for another K", edit(func(st map[string]any) { st["graphs"] = st["graphs"].([]any)[:1] }), "graphs for"},
		{"descriptors of a stranger", edit(func(st map[string]any) { st["desc"].([]any)[0].(map[string]any)["id"] = "zz" }), "not in the graphs"},
		{"descriptors of another shape", edit(func(st map[string]any) { st["dim"] = 2 }), "descriptor"},
		{"descriptors kept after freezing", edit(func(st map[string]any) { st["frozen"] = true }), "froze"},
		{"unknown field", edit(func(st map[string]any) { st["kernel"] = []int{1} }), "unknown field"},
		{"unreadable", func(s *Snapshot) { s.Strategy = []byte(`{"ids":`) }, "fedgsp state"},
	}
	checkRestoreRefusals(t, good, tests)
}

// SetState never panics, and whatever it accepts it exports again as it
// was given (up to the encoding).
func FuzzFedGSPSetState(f *testing.F) {
	m, _ := gspMidRound(&testing.T{})
	st, _ := m.strategy.State()
	f.Add([]byte(st))
	f.Add([]byte(`{"ids":["a"],"orders":1,"principal":1,"dim":1,"graphs":["AAAAAAAA8D8=","AAAAAAAA8D8="]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := newFedGSPStrategy(gspCfg().FedGSP)
		if err := s.SetState(raw, []string{"a", "b", "c"}); err != nil {
			return
		}
		out, err := s.State()
		if err != nil {
			t.Fatal(err)
		}
		s2 := newFedGSPStrategy(gspCfg().FedGSP)
		if err := s2.SetState(out, []string{"a", "b", "c"}); err != nil {
			t.Fatalf("state it exported refused: %v", err)
		}
		if again, _ := s2.State(); string(again) != string(out) {
			t.Fatalf("state changed through a round trip:\n%s\n%s", out, again)
		}
	})
}
