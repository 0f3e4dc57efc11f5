package gnn

import (
	"math"
	"testing"
)

func TestSoftmaxCrossEntropyValues(t *testing.T) {
	logits := NewFrom(4, 3, []float32{
		1, 2, 3,
		0, 0, 0,
		1000, 0, -1000, // stable for large logits
		5, 5, 5,
	})
	labels := []int32{2, 0, 0, -1}
	lse := func(xs ...float64) float64 {
		var s float64
		for _, x := range xs {
			s += math.Exp(x)
		}
		return math.Log(s)
	}
	l0 := lse(1, 2, 3) - 3
	l1 := math.Log(3)
	l2 := 0.0
	for _, tc := range []struct {
		name string
		mask []bool
		w    []float32
		want float64
	}{
		{"all", nil, nil, (l0 + l1 + l2) / 3},
		{"mask", []bool{true, false, true, true}, nil, (l0 + l2) / 2},
		{"weights", nil, []float32{2, 1, 0.5}, (0.5*l0 + 2*l1 + 2*l2) / 4.5},
		{"empty", []bool{false, false, false, true}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grad := randTensor(newRNG(1), 4, 3)
			got := SoftmaxCrossEntropy(logits, labels, tc.mask, tc.w, grad)
			if math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("loss %v, want %v", got, tc.want)
			}
			if !grad.AllFinite() || !allZero(grad.Row(3)) {
				t.Errorf("gradient of the unlabelled row %v", grad.Row(3))
			}
			// Each counted row's gradient sums to zero.
			for i := 0; i < 3; i++ {
				var s float64
				for _, v := range grad.Row(i) {
					s += float64(v)
				}
				if math.Abs(s) > 1e-6 {
					t.Errorf("row %d gradient sums to %v", i, s)
				}
			}
		})
	}
}

func TestScore(t *testing.T) {
	// Truth 0 0 1 1 2, prediction 0 1 1 1 0 (one-hot logits), plus an
	// unlabelled node and a masked-out node that must not count.
	pred := []int{0, 1, 1, 1, 0, 2, 2}
	labels := []int32{0, 0, 1, 1, 2, -1, 2}
	mask := []bool{true, true, true, true, true, true, false}
	logits := New(7, 4)
	for i, p := range pred {
		logits.Set(i, p, 5)
	}
	s := Score(logits, labels, mask)
	// Class 0: TP1 FP1 FN1 → 0.5; class 1: TP2 FP1 FN0 → 0.8; class 2: TP0
	// FP0 FN1 → 0; class 3 absent from truth and prediction: not counted.
	if s.Count != 5 || math.Abs(s.Acc-0.6) > 1e-12 || math.Abs(s.MacroF1-1.3/3) > 1e-12 {
		t.Errorf("scores %+v, want count 5, acc 0.6, macro-F1 %v", s, 1.3/3)
	}
	if s.Loss <= 0 {
		t.Errorf("loss %v", s.Loss)
	}
	if z := Score(logits, labels, make([]bool, 7)); z != (Scores{}) {
		t.Errorf("empty mask: %+v", z)
	}
	if got := ArgMax(logits, nil); got[2] != 1 || got[4] != 0 {
		t.Errorf("argmax %v", got)
	}
}
