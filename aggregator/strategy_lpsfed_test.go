package aggregator

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
)

var lpT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeReference records the statistics it was asked for and returns a
// kernel that encodes the seed, so that tests can see rebuilds.
type fakeReference struct{ calls []ReferenceStats }

func (f *fakeReference) build(s ReferenceStats, phi int, seed uint64) ([]float64, error) {
	f.calls = append(f.calls, s)
	k := make([]float64, phi)
	for i := range k {
		k[i] = float64(seed) + float64(i)
	}
	return k, nil
}

func lpsfedCfg(algo string, ref *fakeReference) Config {
	return Config{Algo: algo, Rounds: 3, MinClients: 3, RoundTimeout: time.Minute, FreezeRounds: 1,
		LPSFed: LPSFedConfig{Phi: 4, Seed: 100, Reference: ref.build}}
}

// kernelOf decodes the reference kernel an OpenRound announces (nil and 0
// without a payload).
func kernelOf(t *testing.T, o OpenRound) ([]float32, uint64) {
	t.Helper()
	if o.Payload == nil {
		return nil, 0
	}
	var lr bus.LPSFedRound
	if err := msgpack.Unmarshal(o.Payload, &lr); err != nil {
		t.Fatalf("round %d payload: %v", o.Round, err)
	}
	return lr.Kernel, lr.Version
}

func actionsOf[T Action](acts []Action) []T {
	var out []T
	for _, a := range acts {
		if x, ok := a.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// joinAll joins clients a, b, c with different counts; the third join
// opens round 1.
func joinAll(t *testing.T, m *Machine) []Action {
	t.Helper()
	var acts []Action
	for i, id := range []string{"a", "b", "c"} {
		acts = m.Step(Join{Client: id, SchemaHash: "h", NumParams: 2, Weight: float64(10 * (i + 1)),
			Users: 10 * (i + 1), Items: 20 * (i + 1), Edges: 100 * (i + 1), Now: lpT0})
	}
	return acts
}

func TestLPSFedMachinePersonalizes(t *testing.T) {
	ref := &fakeReference{}
	m, err := NewMachine(lpsfedCfg(AlgoLPSFed, ref))
	if err != nil {
		t.Fatal(err)
	}
	open := actionsOf[OpenRound](joinAll(t, m))
	if len(open) != 1 || open[0].Round != 1 {
		t.Fatalf("round 1 open: %+v", open)
	}
	if k, v := kernelOf(t, open[0]); v != 1 || len(k) != 4 || k[0] != 101 {
		t.Fatalf("round 1 kernel %v version %d, want the kernel of seed 101, version 1", k, v)
	}
	if want := (ReferenceStats{Users: 20, Items: 40, Edges: 200}); len(ref.calls) != 1 || ref.calls[0] != want {
		t.Fatalf("reference built from %+v, want the mean counts %+v", ref.calls, want)
	}
	params := map[string][]float32{"a": {1, 0}, "b": {3, 2}, "c": {5, -2}}
	rho := map[string]float64{"a": 0.5, "b": 1.5, "c": 1.0}
	margin := map[string]float64{"a": 0.2, "b": 0.4, "c": 0.9}
	round := func(r uint64) []Action {
		var acts []Action
		for _, id := range []string{"c", "a", "b"} { // arrival order must not matter
			acts = append(acts, m.Step(UpdateIn{Client: id, Round: r, Weight: 1, Params: params[id],
				HasRho: r == 1, Rho: rho[id], RhoVersion: 1, HasMargin: true, Margin: margin[id], Now: lpT0})...)
		}
		return acts
	}
	// Round 1 is frozen: mixed and recorded, nothing distributed.
	acts := round(1)
	if n := len(actionsOf[PublishModel](acts)); n != 0 {
		t.Fatalf("frozen round distributed %d models", n)
	}
	rc := actionsOf[RoundClosed](acts)
	if len(rc) != 1 || !rc[0].Frozen || rc[0].Aggregate || rc[0].Mix == nil || len(rc[0].Mix.Rho) != 3 {
		t.Fatalf("round 1 close %+v", rc)
	}
	if next := actionsOf[OpenRound](acts); len(next) != 1 || next[0].ModelRound != 0 {
		t.Fatalf("round 2 open %+v: clients must keep their own models after a frozen round", next)
	}
	// Round 2: ρ from round 1 still counts (ρ_c is released once per K^R).
	acts = round(2)
	sends := actionsOf[PublishModel](acts)
	if len(sends) != 3 {
		t.Fatalf("%d personalized models, want 3", len(sends))
	}
	rc = actionsOf[RoundClosed](acts)
	if len(rc) != 1 || rc[0].Frozen || !rc[0].Aggregate || rc[0].Mix == nil {
		t.Fatalf("round 2 close %+v", rc)
	}
	avg := []float64{3, 0}
	gm := (0.2 + 0.4 + 0.9) / 3
	rhoBar := map[string]float64{"a": 1, "b": 0, "c": 0.5} // Eq. 12 on 0.5, 1.5, 1.0
	for _, s := range sends {
		r := rhoBar[s.To]
		if got := rc[0].Mix.RhoBar[s.To]; got != r || s.Round != 2 || s.Final {
			t.Fatalf("%s: ρ̄ %v, want %v (model %+v)", s.To, got, r, s)
		}
		for i, g := range avg {
			want := g*r + float64(params[s.To][i])*(1-r)
			if math.Abs(float64(s.Params[i])-want) > 1e-6 {
				t.Fatalf("%s: θ[%d] = %v, want %v", s.To, i, s.Params[i], want)
			}
		}
		if want := gm*r + margin[s.To]*(1-r); !s.HasMargin || math.Abs(s.Margin-want) > 1e-12 {
			t.Fatalf("%s: margin %v, want %v", s.To, s.Margin, want)
		}
	}
	if next := actionsOf[OpenRound](acts); len(next) != 1 || next[0].ModelRound != 2 {
		t.Fatalf("round 3 open %+v", next)
	} else if _, v := kernelOf(t, next[0]); v != 1 {
		t.Fatalf("round 3 kernel version %d, want 1 (built once)", v)
	}
	acts = round(3)
	if f := actionsOf[Finished](acts); len(f) != 1 || !m.Finished() {
		t.Fatal("job did not finish after 3 rounds")
	}
	for _, s := range actionsOf[PublishModel](acts) {
		if !s.Final {
			t.Fatal("last round's models not marked final")
		}
	}
}

// FedAvg on the LPSFed client model is the generic fedavg strategy: no
// kernel, no margin, one sample-weighted model for every client.
func TestLPSFedMachineFedAvg(t *testing.T) {
	cfg := lpsfedCfg(AlgoFedAvg, &fakeReference{})
	cfg.LPSFed, cfg.FreezeRounds = LPSFedConfig{}, 0
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	open := actionsOf[OpenRound](joinAll(t, m))
	if len(open) != 1 || open[0].Payload != nil {
		t.Fatalf("fedavg open %+v: no kernel expected", open)
	}
	var acts []Action
	for i, id := range []string{"a", "b", "c"} {
		acts = append(acts, m.Step(UpdateIn{Client: id, Round: 1, Weight: float64(i + 1), Params: []float32{float32(i), 1},
			HasMargin: true, Margin: 0.5, Now: lpT0})...)
	}
	sends := actionsOf[PublishModel](acts)
	want := float32(0*1+1*2+2*3) / 6 // sample-weighted
	if len(sends) != 1 {
		t.Fatalf("%d models, want one for every client", len(sends))
	}
	if s := sends[0]; s.To != "" || math.Abs(float64(s.Params[0]-want)) > 1e-6 || s.Params[1] != 1 || s.HasMargin {
		t.Fatalf("fedavg model %+v, want θ[0] = %v for every client", s, want)
	}
	if rc := actionsOf[RoundClosed](acts); len(rc) != 1 || rc[0].Mix != nil {
		t.Fatalf("fedavg close %+v: no mixing expected", rc)
	}
}

func TestLPSFedMachineDeadlineAndDrops(t *testing.T) {
	ref := &fakeReference{}
	cfg := lpsfedCfg(AlgoLPSFedBPR, ref)
	cfg.LPSFed.Strict, cfg.LPSFed.StrictStats, cfg.LPSFed.RefEvery, cfg.FreezeRounds = true, ReferenceStats{Users: 7, Items: 8, Edges: 9}, 1, 0
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	joinAll(t, m)
	if ref.calls[0] != cfg.LPSFed.StrictStats {
		t.Fatalf("strict reference built from %+v", ref.calls[0])
	}
	for _, tc := range []struct {
		ev     UpdateIn
		reason string
	}{
		{UpdateIn{Client: "a", Round: 1, Params: []float32{1, 1}, HasMargin: true, Margin: math.Inf(1)}, "non_finite"},
		{UpdateIn{Client: "zz", Round: 1, Params: []float32{1, 1}}, "unknown_client"},
		{UpdateIn{Client: "a", Round: 1, Params: []float32{1}}, "shape"},
		{UpdateIn{Client: "a", Round: 1, Params: []float32{1, 1}, HasRho: true, Rho: math.NaN()}, "non_finite"},
		{UpdateIn{Client: "a", Round: 2, Params: []float32{1, 1}}, "future"},
		{UpdateIn{Client: "a", Round: 0, Params: []float32{1, 1}}, "late"},
	} {
		tc.ev.Now = lpT0
		d := actionsOf[Dropped](m.Step(tc.ev))
		if len(d) != 1 || d[0].Reason != tc.reason {
			t.Fatalf("%+v: dropped %+v, want %s", tc.ev, d, tc.reason)
		}
	}
	m.Step(UpdateIn{Client: "a", Round: 1, Params: []float32{1, 1}, HasRho: true, Rho: 2, Now: lpT0})
	if d := actionsOf[Dropped](m.Step(UpdateIn{Client: "a", Round: 1, Params: []float32{1, 1}, Now: lpT0})); len(d) != 1 || d[0].Reason != "duplicate" {
		t.Fatalf("duplicate: %+v", d)
	}
	acts := m.Step(Tick{Now: lpT0.Add(2 * time.Minute)})
	rc := actionsOf[RoundClosed](acts)
	if len(rc) != 1 || rc[0].Reason != "deadline" || !reflect.DeepEqual(rc[0].Late, []string{"b", "c"}) {
		t.Fatalf("close %+v", rc)
	}
	sends := actionsOf[PublishModel](acts)
	if len(sends) != 1 || sends[0].To != "a" || rc[0].Mix.RhoBar["a"] != 1 {
		t.Fatalf("only a contributed: %+v, mixing %+v", sends, rc[0].Mix)
	}
	open := actionsOf[OpenRound](acts)
	if len(open) != 1 || len(ref.calls) != 2 {
		t.Fatalf("RefEvery=1 must rebuild K^R for round 2: %+v, %d builds", open, len(ref.calls))
	}
	if k, v := kernelOf(t, open[0]); v != 2 || k[0] != 102 {
		t.Fatalf("round 2 kernel %v version %d, want the kernel of seed 102, version 2", k, v)
	}
}

// TestLPSFedMachineReplay: the same events give the same actions.
func TestLPSFedMachineReplay(t *testing.T) {
	run := func() []Action {
		m, _ := NewMachine(lpsfedCfg(AlgoLPSFed, &fakeReference{}))
		var log []Action
		log = append(log, joinAll(t, m)...)
		for r := uint64(1); r <= 3; r++ {
			for i, id := range []string{"b", "c", "a"} {
				log = append(log, m.Step(UpdateIn{Client: id, Round: r, Params: []float32{float32(i) * 0.1, float32(r)},
					HasRho: true, Rho: float64(i), HasMargin: true, Margin: 0.1 * float64(i), Now: lpT0})...)
			}
		}
		return log
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatalf("replay differs:\n%s\n%s", fmt.Sprint(a), fmt.Sprint(b))
	}
}

func TestNormalizeRho(t *testing.T) {
	for _, tc := range []struct{ in, want []float64 }{
		{nil, []float64{}},
		{[]float64{3}, []float64{1}},
		{[]float64{2, 2}, []float64{1, 1}},
		{[]float64{0, 4, 1}, []float64{1, 0, 0.75}},
	} {
		if got := normalizeRho(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("normalizeRho(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
