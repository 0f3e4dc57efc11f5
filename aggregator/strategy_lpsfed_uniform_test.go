package aggregator

import (
	"math"
	"testing"
)

// Uniform (Table 4's "w/o per"): ρ_c is still reported, but every client
// gets the plain mean of the MLPs and the mean margin.
func TestLPSFedUniformMixing(t *testing.T) {
	cfg := lpsfedCfg(AlgoLPSFed, &fakeReference{})
	cfg.FreezeRounds, cfg.Rounds = 0, 1
	cfg.LPSFed.Uniform = true
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	joinAll(t, m)
	params := map[string][]float32{"a": {1, 0}, "b": {3, 2}, "c": {5, -2}}
	margin := map[string]float64{"a": 0.2, "b": 0.4, "c": 0.9}
	var acts []Action
	for i, id := range []string{"a", "b", "c"} {
		acts = append(acts, m.Step(UpdateIn{Client: id, Round: 1, Weight: 1, Params: params[id],
			HasRho: true, Rho: float64(i), RhoVersion: 1, HasMargin: true, Margin: margin[id], Now: lpT0})...)
	}
	rc := actionsOf[RoundClosed](acts)
	if len(rc) != 1 || rc[0].Mix == nil || len(rc[0].Mix.Rho) != 3 {
		t.Fatalf("close %+v: ρ_c must still be reported", rc)
	}
	sends := actionsOf[PublishModel](acts)
	if len(sends) != 3 {
		t.Fatalf("%d models, want 3", len(sends))
	}
	gm := (0.2 + 0.4 + 0.9) / 3
	for _, s := range sends {
		if r := rc[0].Mix.RhoBar[s.To]; r != 1 {
			t.Fatalf("%s: ρ̄ %v, want 1", s.To, r)
		}
		if s.Params[0] != 3 || s.Params[1] != 0 {
			t.Fatalf("%s: θ %v, want the mean [3 0]", s.To, s.Params)
		}
		if math.Abs(s.Margin-gm) > 1e-12 {
			t.Fatalf("%s: margin %v, want the mean %v", s.To, s.Margin, gm)
		}
	}
}
