package aggregator

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// lpsfedMidRound drives an LPSFed job (K^R rebuilt every round, round 1
// frozen) into round 3 with personalized models out and one update of
// round 3 pending; then lists what follows.
func lpsfedMidRound(t *testing.T, ref *fakeReference) (*Machine, []Event) {
	t.Helper()
	cfg := lpsfedCfg(AlgoLPSFed, ref)
	cfg.Rounds, cfg.LPSFed.RefEvery = 4, 1
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	joinAll(t, m)
	u := func(id string, r uint64, i int, rho bool) UpdateIn {
		return UpdateIn{Client: id, Round: r, Weight: float64(i + 1), Params: []float32{float32(i) - 0.5, float32(r) / 3},
			HasRho: rho, Rho: 0.25 * float64(i+int(r)), RhoVersion: r, HasMargin: true, Margin: 0.1 * float64(i), Now: lpT0}
	}
	for r := uint64(1); r <= 2; r++ {
		for i, id := range []string{"a", "b", "c"} {
			m.Step(u(id, r, i, id != "c" || r == 1))
		}
	}
	m.Step(u("b", 3, 1, true))
	then := []Event{
		u("b", 3, 1, false),                   // duplicate
		Tick{Now: lpT0.Add(30 * time.Second)}, // no deadline yet
		u("a", 3, 0, false),
		Join{Client: "d", SchemaHash: "h", NumParams: 2, Weight: 5, Users: 9, Items: 9, Edges: 90, Now: lpT0}, // resynced? no model yet
		Join{Client: "a", SchemaHash: "h", NumParams: 2, Weight: 1, Users: 10, Items: 20, Edges: 100, Now: lpT0},
		u("c", 3, 2, true),
		Tick{Now: lpT0.Add(3 * time.Minute)}, // d never answered: deadline
		u("a", 4, 0, true), u("b", 4, 1, false), u("c", 4, 2, false), u("d", 4, 3, true),
	}
	return m, then
}

// An LPSFed machine restored from a mid-round snapshot answers every later
// event exactly as the original: kernel, ρ_c, counts and the latest
// personalized models are all in the snapshot.
func TestSnapshotRestoresLPSFedMidRound(t *testing.T) {
	ref := &fakeReference{}
	m, then := lpsfedMidRound(t, ref)
	snap := m.Snapshot()
	if len(snap.Models) != 3 || snap.Models[0].To != "a" || !snap.Models[0].HasMargin || snap.ModelRound != 2 || snap.Strategy == nil {
		t.Fatalf("snapshot misses the personalized models or the strategy state: %+v", snap)
	}
	b, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kernel":[103,104,105,106]`, `"kernel_version":3`, `"has_rho":true`, `"users":30`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("encoded snapshot lacks %s:\n%s", want, b)
		}
	}
	dec, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, snap) {
		t.Fatalf("snapshot changed through its encoding:\n got %+v\nwant %+v", dec, snap)
	}
	dec.Config.LPSFed.Reference = ref.build // code is not in a snapshot
	r, err := Restore(dec)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Snapshot(); !reflect.DeepEqual(got, snap) {
		t.Fatalf("restored machine's snapshot differs:\n got %+v\nwant %+v", got, snap)
	}
	personal := 0
	for i, ev := range then {
		want, got := m.Step(ev), r.Step(ev)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: restored machine answered\n%#v\nwant\n%#v", i, got, want)
		}
		personal += len(actionsOf[PublishModel](want))
	}
	if !m.Finished() || personal < 6 {
		t.Fatalf("the continuation is too short to tell: finished %v, %d models", m.Finished(), personal)
	}
}

// A rejoining LPSFed client gets its own latest personalized model back,
// never another client's.
func TestLPSFedRejoinResyncsOwnModel(t *testing.T) {
	m, _ := lpsfedMidRound(t, &fakeReference{})
	acts := m.Step(Join{Client: "b", SchemaHash: "h", NumParams: 2, Weight: 2, Users: 20, Items: 40, Edges: 200, Now: lpT0})
	sends := actionsOf[PublishModel](acts)
	var own PublishModel
	for _, p := range m.Models() {
		if p.To == "b" {
			own = p
		}
	}
	if len(sends) != 1 || sends[0].To != "b" || sends[0].Round != 2 || !reflect.DeepEqual(sends[0].Params, own.Params) || sends[0].Margin != own.Margin {
		t.Fatalf("rejoin resent %+v, want b's own model %+v", sends, own)
	}
}

func TestSnapshotRestoreRefusesBadStrategyState(t *testing.T) {
	good := func() Snapshot {
		m, _ := lpsfedMidRound(t, &fakeReference{})
		return m.Snapshot()
	}
	tests := []restoreRefusal{
		{"kernel of another length", func(s *Snapshot) {
			s.Strategy = []byte(`{"kernel":[1,2],"kernel_version":3}`)
		}, "phi"},
		{"kernel without version", func(s *Snapshot) { s.Strategy = []byte(`{"kernel":[1,2,3,4]}`) }, "version"},
		{"state of a stranger", func(s *Snapshot) { s.Strategy = []byte(`{"clients":[{"id":"zz","users":1}]}`) }, "never joined"},
		{"negative counts", func(s *Snapshot) { s.Strategy = []byte(`{"clients":[{"id":"a","users":-1}]}`) }, "negative"},
		{"unreadable state", func(s *Snapshot) { s.Strategy = []byte(`[`) }, "lpsfed state"},
		{"state for fedavg", func(s *Snapshot) { s.Config.Algo, s.Config.LPSFed = AlgoFedAvg, LPSFedConfig{} }, "no state"},
		{"model for a stranger", func(s *Snapshot) { s.Models[0].To = "zz" }, "unknown client"},
		{"two models for one client", func(s *Snapshot) { s.Models[1].To = s.Models[0].To }, "sorted and unique"},
		{"global beside personal", func(s *Snapshot) { s.Models[0].To = "" }, "global model beside"},
		{"model from the future", func(s *Snapshot) { s.Models[0].Round = 3 }, "round 3"},
		{"model of the wrong length", func(s *Snapshot) { s.Models[0].Params = []float32{1} }, "values"},
		{"margin not finite", func(s *Snapshot) { s.Models[0].Margin = math.Inf(1) }, "margin"},
		{"pending ρ not finite", func(s *Snapshot) { s.Pending[0].Rho = math.NaN() }, "releases"},
		{"unknown algo", func(s *Snapshot) { s.Config.Algo = "fedsage" }, "lpsfed-bpr, lpsfed"},
		{"lpsfed state for fedgsp", func(s *Snapshot) { s.Config.Algo = AlgoFedGSP }, "fedgsp state"},
	}
	checkRestoreRefusals(t, good, tests)
}
