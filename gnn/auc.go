package gnn

import (
	"math"
	"sort"
)

// ROCAUC is the area under the ROC curve of scores against positive: the
// probability that a random positive outranks a random negative, ties
// counting one half (the Mann–Whitney statistic, as scikit-learn's
// roc_auc_score computes it). It is NaN when either class is empty or a
// score is NaN, because no ranking is then defined.
//
// Shapes: len(scores) == len(positive).
func ROCAUC(scores []float64, positive []bool) float64 {
	if len(scores) != len(positive) {
		panic("gnn: ROCAUC: scores and labels differ in length")
	}
	idx := make([]int, len(scores))
	for i := range idx {
		if math.IsNaN(scores[i]) {
			return math.NaN()
		}
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	// Sum the (average, for ties) ranks of the positives.
	var rankSum float64
	var pos, neg int
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && scores[idx[hi]] == scores[idx[lo]] {
			hi++
		}
		mid := float64(lo+hi+1) / 2 // ranks lo+1..hi, averaged
		for _, i := range idx[lo:hi] {
			if positive[i] {
				rankSum += mid
				pos++
			} else {
				neg++
			}
		}
		lo = hi
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg))
}

// BinaryAUC is the ROC-AUC of a two-class model's logits on the nodes
// where mask is true (nil: all) and labels[i] ≥ 0, ranking by the logit
// margin of class 1, which orders nodes as p(class 1) does. It is NaN when
// the nodes hold one class only.
//
// Shapes: logits N×2, len(labels) == N, mask nil or N long.
func BinaryAUC(logits *Tensor, labels []int32, mask []bool) float64 {
	if logits.Cols != 2 || len(labels) != logits.Rows || mask != nil && len(mask) != logits.Rows {
		ShapePanic("binary auc", "logits %dx%d, %d labels, %d mask", logits.Rows, logits.Cols, len(labels), len(mask))
	}
	var scores []float64
	var pos []bool
	for i, y := range labels {
		if y < 0 || mask != nil && !mask[i] {
			continue
		}
		r := logits.Row(i)
		scores = append(scores, float64(r[1])-float64(r[0]))
		pos = append(pos, y == 1)
	}
	return ROCAUC(scores, pos)
}
