package amllearner

import (
	"math"
	"testing"

	"graphfed/aml/eval"
)

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
		cfg := Config{Hidden: 8, BatchSize: 64, FanOut: []int{3, 3}, Seed: 1, EvalSample: 200,
			OnFinalScore: func(done, total int) { calls, lastDone, lastTotal = calls+1, done, total }}
		l, err := New(d, cfg)
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
			pos += final["test_typ_"+eval.TypologyKey(k)+"_pos"]
			tp += final["test_typ_"+eval.TypologyKey(k)+"_tp"]
		}
		if pos != final["test_tp"]+final["test_fn"] || tp != final["test_tp"] {
			t.Errorf("%s: typologies count %v laundering (%v flagged), the confusion matrix %v (%v)", id, pos, tp,
				final["test_tp"]+final["test_fn"], final["test_tp"])
		}
	}
}
