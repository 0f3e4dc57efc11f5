package scenarios

import (
	"fmt"
	"math"
	"testing"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// Under attack by a bank that scales its releases to the clip every
// round, the mean ends beyond the derived bound and every robust rule
// within it, on more than one seed (the data and noise follow the seed).
func TestScenarioRobustAggregation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts embedded NATS servers")
	}
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			out := runNamed(t, "robust-aggregation", ScenarioOptions{Seed: seed})
			if !out.Pass {
				t.Fatalf("%+v", out)
			}
			for _, r := range robustRules {
				d, bound := out.Metrics["dist_"+r.name], out.Metrics["bound_"+r.name]
				if within := d <= bound; within != r.holds || bound <= 0 {
					t.Errorf("%s: distance %.4g to the clean run, bound %.4g", r.name, d, bound)
				}
				if r.holds && out.Metrics["set_aside_attacker_"+r.name] <= out.Metrics["set_aside_honest_max_"+r.name] {
					t.Errorf("%s: the attacker does not lead what was set aside: %v", r.name, out.Metrics)
				}
			}
		})
	}
}

// The bound sums the rounds' honest ranges (and the noise allowance)
// times the rule's factor.
func TestRobustBound(t *testing.T) {
	// Two banks, two rounds of two parameters: ranges (3, 4) and (0, 0).
	honest := [][][]float32{{{0, 0}, {1, 1}}, {{3, 4}, {1, 1}}}
	noise := 10 * robustSigma * math.Sqrt(2)
	tests := []struct {
		factor, want float64
	}{
		{1, 5 + 2*noise},
		{0.5, (5 + 2*noise) / 2},
	}
	for _, tc := range tests {
		if got := robustBound(honest, tc.factor); math.Abs(got-tc.want) > 1e-12 {
			t.Fatalf("factor %g: bound %v, want %v", tc.factor, got, tc.want)
		}
	}
}

// The judge fails every way the rules, the attack or the job could fall
// short.
func TestScenarioRobustJudge(t *testing.T) {
	attacker := deploy.ClientID(robustAttacker)
	run := func(banks int, model []float32, loss float64, aside map[string]int) robustRun {
		var r robustRun
		a := &r.res.Aggregator
		a.Model, a.Final = model, map[string]map[string]float64{}
		for i := range banks {
			var h [][]float32
			for range robustRounds {
				h = append(h, []float32{1 + 0.01*float32(i), 2})
			}
			r.honest = append(r.honest, h)
			a.Final[deploy.ClientID(i)] = map[string]float64{"test_loss": loss, "test_acc": 0.8}
		}
		for i := range robustRounds {
			a.Closes = append(a.Closes, aggregator.RoundClosed{Round: uint64(i + 1), In: bankIDsN(banks), SetAside: aside})
			for id, k := range aside {
				if a.SetAside == nil {
					a.SetAside = map[string]int{}
				}
				a.SetAside[id] += k
			}
		}
		return r
	}
	good := func() (robustRun, []robustRun) {
		clean := run(robustBanks-1, []float32{1, 2}, 0.4, nil)
		var runs []robustRun
		for _, r := range robustRules {
			if r.holds {
				runs = append(runs, run(robustBanks, []float32{1.01, 2}, 0.41, map[string]int{attacker: 9, deploy.ClientID(0): 2}))
			} else {
				runs = append(runs, run(robustBanks, []float32{5, 9}, 0.6, nil))
			}
		}
		return clean, runs
	}
	const median = 1 // robustRules' index
	tests := []struct {
		name   string
		change func(clean *robustRun, runs []robustRun)
		inv    string
	}{
		{"as it should be", func(*robustRun, []robustRun) {}, ""},
		{"a rule lets the attacker in", func(_ *robustRun, runs []robustRun) { runs[median].res.Aggregator.Model = []float32{5, 9} }, InvResultChanged},
		{"the mean stays put", func(_ *robustRun, runs []robustRun) { runs[0].res.Aggregator.Model = []float32{1, 2} }, InvResultChanged},
		{"the contract rejected the attack", func(_ *robustRun, runs []robustRun) {
			runs[median].res.Aggregator.Rejects = map[string]uint64{bus.ReasonNorm: 6}
		}, InvNotRejected},
		{"a round without the attacker set aside", func(_ *robustRun, runs []robustRun) {
			runs[median].res.Aggregator.Closes[2].SetAside = map[string]int{deploy.ClientID(0): 2}
		}, InvNotRejected},
		{"an honest bank set aside as much", func(_ *robustRun, runs []robustRun) {
			runs[median].res.Aggregator.SetAside[deploy.ClientID(0)] = runs[median].res.Aggregator.SetAside[attacker]
		}, InvNotRejected},
		{"the mean sets something aside", func(_ *robustRun, runs []robustRun) {
			runs[0].res.Aggregator.SetAside = map[string]int{attacker: 1}
		}, InvResultChanged},
		{"a round short", func(clean *robustRun, _ []robustRun) { clean.res.Aggregator.Closes = clean.res.Aggregator.Closes[1:] }, InvNoProgress},
		{"a bank missing from a round", func(_ *robustRun, runs []robustRun) {
			runs[median].res.Aggregator.Closes[0].In = bankIDsN(robustBanks - 1)
		}, InvNoProgress},
		{"a bank that skipped a release", func(_ *robustRun, runs []robustRun) { runs[median].honest[2] = runs[median].honest[2][1:] }, InvNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, runs := good()
			tc.change(&clean, runs)
			out := judgeRobust("x", clean, runs)
			if out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}
