package cefedgnn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/gnn"
)

// macroFromCounts is the macro-F1 of per-class counts over the classes
// that occur (tp+fp+fn > 0), the definition gnn.Score documents.
func macroFromCounts(tp, fp, fn []int) float64 {
	var sum float64
	n := 0
	for k := range tp {
		if tp[k]+fp[k]+fn[k] > 0 {
			sum += gnn.F1(float64(tp[k]), float64(fp[k]), float64(fn[k]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// TestClassCounts: hand-computed counts, including a masked node, an
// unlabelled one, a tie (the first maximum wins, as in gnn.Score) and a
// class that occurs nowhere.
func TestClassCounts(t *testing.T) {
	tests := []struct {
		name       string
		logits     [][]float32
		labels     []int32
		mask       []bool
		tp, fp, fn []int
	}{
		{
			name:   "hits, a miss, a tie, masked and unlabelled nodes",
			logits: [][]float32{{3, 1, 0, 0}, {0, 2, 1, 0}, {1, 1, 0, 0}, {0, 0, 5, 0}, {0, 9, 0, 0}, {0, 0, 0, 1}},
			labels: []int32{0, 0, 1, 2, 1, -1},
			mask:   []bool{true, true, true, true, false, true},
			// node 1: label 0 predicted 1; node 2: a tie between 0 and 1
			// predicts 0 for label 1; class 3 occurs nowhere.
			tp: []int{1, 0, 1, 0}, fp: []int{1, 1, 0, 0}, fn: []int{1, 1, 0, 0},
		},
		{
			name:   "no mask: every labelled node",
			logits: [][]float32{{0, 1}, {1, 0}},
			labels: []int32{1, 1},
			tp:     []int{0, 1}, fp: []int{1, 0}, fn: []int{0, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lg := gnn.New(len(tc.logits), len(tc.logits[0]))
			for i, r := range tc.logits {
				copy(lg.Row(i), r)
			}
			tp, fp, fn := classCounts(lg, tc.labels, tc.mask)
			if !slices.Equal(tp, tc.tp) || !slices.Equal(fp, tc.fp) || !slices.Equal(fn, tc.fn) {
				t.Fatalf("tp %v fp %v fn %v, want %v %v %v", tp, fp, fn, tc.tp, tc.fp, tc.fn)
			}
			if got, want := macroFromCounts(tp, fp, fn), gnn.Score(lg, tc.labels, tc.mask).MacroF1; math.Abs(got-want) > 1e-12 {
				t.Fatalf("macro-F1 of the counts %v, gnn.Score's %v", got, want)
			}
			sc := map[string]float64{}
			putClassCounts(sc, "test_", tp, fp, fn)
			if len(sc) != 3*len(tp) || sc[ClassCountKey("test_", 1, "fp")] != float64(tc.fp[1]) {
				t.Fatalf("scores %v", sc)
			}
		})
	}
}

// TestClassCountsMatchScore: on random logits with ties and missing
// classes the counts' macro-F1 is gnn.Score's, so that the job's pooled
// figure over one client equals that client's own.
func TestClassCountsMatchScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := range 50 {
		n, c := 1+rng.IntN(40), 1+rng.IntN(7)
		lg := gnn.New(n, c)
		for i := range lg.Data {
			lg.Data[i] = float32(rng.IntN(3)) // small integers: many ties
		}
		labels := make([]int32, n)
		mask := make([]bool, n)
		for i := range labels {
			labels[i] = int32(rng.IntN(c+1)) - 1 // -1: unlabelled
			if c > 2 && labels[i] == int32(c-1) {
				labels[i] = 0 // the last class never a label
			}
			mask[i] = rng.IntN(4) > 0
		}
		tp, fp, fn := classCounts(lg, labels, mask)
		if got, want := macroFromCounts(tp, fp, fn), gnn.Score(lg, labels, mask).MacroF1; math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: macro-F1 of the counts %v, gnn.Score's %v", trial, got, want)
		}
	}
}

// TestEvaluateScores: Evaluate reports the dataset's metric (accuracy on a
// CSBM graph) as test_score and val_score, and per-class test counts
// that cover the client's test nodes once.
func TestEvaluateScores(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "louvain", 3)
	l, err := New(cgs[0], peers, Config{Hidden: 6, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.Train(3)
	ev := l.Evaluate()
	if ev["test_score"] != ev["test_acc"] || ev["val_score"] != ev["val_acc"] {
		t.Fatalf("test_score %v val_score %v, want the accuracies %v %v", ev["test_score"], ev["val_score"], ev["test_acc"], ev["val_acc"])
	}
	var tp, fn float64
	for k := range cgs[0].Data.Classes {
		tp += ev[ClassCountKey("test_", k, "tp")]
		fn += ev[ClassCountKey("test_", k, "fn")]
	}
	if tp+fn != ev["test_n"] || math.Abs(tp/ev["test_n"]-ev["test_acc"]) > 1e-12 {
		t.Fatalf("counts tp %v fn %v, test_n %v, test_acc %v", tp, fn, ev["test_n"], ev["test_acc"])
	}
}
