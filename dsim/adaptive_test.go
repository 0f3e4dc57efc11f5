package dsim

import (
	"context"
	"testing"
)

// TestDsimAdaptiveDeadlines sweeps seeds with adaptive deadlines on a
// network slow enough that most updates miss the floor, under every fault:
// every invariant holds (round-closed-empty among them: no round closes
// empty while clients are live, before its cap), and the sweep exercised
// both kinds of adaptation.
func TestDsimAdaptiveDeadlines(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 40
	}
	sum, err := RunSeeds(context.Background(), Seeds{First: 1, Count: n, RerunEvery: 10, Workers: 2, Config: func(seed uint64) (Config, error) {
		return AdaptiveConfig(seed), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sum.Failures {
		t.Errorf("%v\n    trace: %s", v, v.TraceFile)
	}
	c := sum.Counters
	if c.Adapted["empty"] == 0 || c.Adapted["measured"] == 0 {
		t.Fatalf("adaptation not exercised: %v", c.Adapted)
	}
	if sum.Finished != sum.Seeds {
		t.Fatalf("%d of %d jobs finished", sum.Finished, sum.Seeds)
	}
	t.Logf("%d seeds: adapted %v, closes %v", sum.Seeds, c.Adapted, c.Closes)
}

// TestDsimEmptyCloseCaught: an aggregator with fixed deadlines, checked as
// if its deadlines adapted, closes rounds empty at the floor on the slow
// network: the round-closed-empty invariant must catch it.
func TestDsimEmptyCloseCaught(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := AdaptiveConfig(seed)
		cfg.fixedDeadlines = true
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v := res.Violation; v != nil {
			if v.Invariant != InvClosedEmpty {
				t.Fatalf("seed %d: %v, want %s", seed, v, InvClosedEmpty)
			}
			caught++
		}
	}
	if caught < 10 {
		t.Fatalf("round-closed-empty caught %d of 20 seeds", caught)
	}
}
