package edgegnn

import (
	"cmp"
	"fmt"
	"slices"

	"graphfed/gnn"
)

// Margins returns, per row of logits (n×2), the margin of the positive
// class: logit[1] − logit[0]. Arg-max prediction is margin > 0.
func Margins(logits *gnn.Tensor, dst []float32) []float32 {
	if logits.Cols != 2 {
		gnn.ShapePanic("edge margins", "logits %v, want n×2", logits)
	}
	dst = dst[:0]
	for i := 0; i < logits.Rows; i++ {
		r := logits.Row(i)
		dst = append(dst, r[1]-r[0])
	}
	return dst
}

// CountAt counts predictions margin > thr against labels (0 or 1).
func CountAt(margins []float32, labels []int32, thr float32) Scores {
	if len(margins) != len(labels) {
		gnn.ShapePanic("count at threshold", "%d margins for %d labels", len(margins), len(labels))
	}
	var t edgeTally
	for i, m := range margins {
		pos, y := m > thr, labels[i] == 1
		switch {
		case pos && y:
			t.tp++
		case pos:
			t.fp++
		case y:
			t.fn++
		default:
			t.tn++
		}
	}
	return t.scores()
}

// BestThreshold returns the decision threshold on margins that maximizes
// the positive class's F1 on (margins, labels) — the usual way an AML
// classifier's operating point is set on validation data — and that F1.
// Ties keep the threshold closest to 0 (arg-max); without positives it is 0.
// The threshold is the midpoint between two consecutive distinct margins,
// so it does not sit on a validation score.
func BestThreshold(margins []float32, labels []int32) (float32, float64, error) {
	if len(margins) != len(labels) {
		return 0, 0, fmt.Errorf("gnn: best threshold: %d margins for %d labels", len(margins), len(labels))
	}
	type scored struct {
		m float32
		y bool
	}
	s := make([]scored, len(margins))
	positives := 0
	for i, m := range margins {
		s[i] = scored{m, labels[i] == 1}
		if s[i].y {
			positives++
		}
	}
	if positives == 0 {
		return 0, 0, nil
	}
	slices.SortFunc(s, func(a, b scored) int { return cmp.Compare(b.m, a.m) })
	best, bestF1, tp, fp := float32(0), 0.0, 0, 0
	// Walking down the sorted margins, predicting positive every margin
	// seen so far: each distinct cut is a candidate threshold.
	for i := 0; i < len(s); i++ {
		if s[i].y {
			tp++
		} else {
			fp++
		}
		if i+1 < len(s) && s[i+1].m == s[i].m {
			continue
		}
		f1 := gnn.F1(float64(tp), float64(fp), float64(positives-tp))
		thr := s[i].m - 1
		if i+1 < len(s) {
			thr = (s[i].m + s[i+1].m) / 2
		}
		if f1 > bestF1 || f1 == bestF1 && abs32(thr) < abs32(best) {
			best, bestF1 = thr, f1
		}
	}
	return best, bestF1, nil
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
