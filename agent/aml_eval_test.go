package agent

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/graph"
)

func TestSampleEval(t *testing.T) {
	g := &graph.AMLGraph{Label: make([]uint8, 100)}
	for e := 0; e < 100; e += 10 {
		g.Label[e] = 1 // 10 laundering, 90 legitimate
	}
	all := make([]int32, 100)
	for i := range all {
		all[i] = int32(i)
	}
	for _, tc := range []struct {
		name      string
		limit     int
		wantSeeds int
		wantScale float64
	}{
		{"all when negative", -1, 100, 1},
		{"all when the legitimate fit", 90, 100, 1},
		{"sampled", 30, 40, 3},
		{"one legitimate", 1, 11, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sampleEval(g, slices.Clone(all), tc.limit, rand.New(rand.NewPCG(1, 2)))
			if len(s.seeds) != tc.wantSeeds || s.negScale != tc.wantScale {
				t.Fatalf("%d seeds, scale %v; want %d, %v", len(s.seeds), s.negScale, tc.wantSeeds, tc.wantScale)
			}
			pos, seen := 0, map[int32]bool{}
			for _, e := range s.seeds {
				if seen[e] {
					t.Fatalf("seed %d twice", e)
				}
				seen[e] = true
				pos += int(g.Label[e])
			}
			if pos != 10 {
				t.Errorf("%d laundering seeds kept, want all 10", pos)
			}
		})
	}
}

// The per-round sample's weighted counts estimate the full split's, and
// the final evaluation counts typologies that add up to the laundering
// test transactions.
func TestAMLEvaluateSampledAndFinal(t *testing.T) {
	for id, d := range amlBanks(t) {
		typ := make([]int8, d.Graph.NumEdges())
		for e := range typ {
			typ[e] = -1
			if d.Graph.Label[e] != 0 {
				typ[e] = int8(e % 3)
			}
		}
		d.Typology = typ
		var calls, lastDone, lastTotal int
		cfg := AMLConfig{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, EvalSample: 200,
			OnFinalScore: func(done, total int) { calls, lastDone, lastTotal = calls+1, done, total }}
		l, err := NewAMLLearner(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		l.Train(5)
		round, final := l.Evaluate(), l.EvaluateFinal()
		if calls == 0 || lastDone != lastTotal || lastTotal != len(l.val)+len(l.test) {
			t.Errorf("%s: progress %d calls, last %d/%d, want to end at %d", id, calls, lastDone, lastTotal, len(l.val)+len(l.test))
		}
		if _, ok := round["test_tp"]; ok {
			t.Errorf("%s: per-round scores include test counts", id)
		}
		for _, p := range []string{"val_"} {
			n := final[p+"tp"] + final[p+"fp"] + final[p+"fn"] + final[p+"tn"]
			est := round[p+"tp"] + round[p+"fp"] + round[p+"fn"] + round[p+"tn"]
			if math.Abs(n-est) > 1e-6*n {
				t.Errorf("%s %s: sampled counts weigh to %v transactions, the split has %v", id, p, est, n)
			}
			if round[p+"tp"]+round[p+"fn"] != final[p+"tp"]+final[p+"fn"] {
				t.Errorf("%s %s: sample kept %v laundering transactions of %v", id, p, round[p+"tp"]+round[p+"fn"], final[p+"tp"]+final[p+"fn"])
			}
		}
		var pos, tp float64
		for _, k := range []int8{0, 1, 2} {
			pos += final["test_typ_"+TypologyKey(k)+"_pos"]
			tp += final["test_typ_"+TypologyKey(k)+"_tp"]
		}
		if pos != final["test_tp"]+final["test_fn"] || tp != final["test_tp"] {
			t.Errorf("%s: typologies count %v laundering (%v flagged), the confusion matrix %v (%v)", id, pos, tp,
				final["test_tp"]+final["test_fn"], final["test_tp"])
		}
	}
}

func TestTypologyKey(t *testing.T) {
	for _, tc := range []struct {
		t    int8
		want string
	}{{-1, "unlisted"}, {int8(graph.AMLFanOut), "fan_out"}, {int8(graph.AMLGatherScatter), "gather_scatter"}, {int8(graph.AMLStack), "stack"}} {
		if got := TypologyKey(tc.t); got != tc.want {
			t.Errorf("TypologyKey(%d) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
