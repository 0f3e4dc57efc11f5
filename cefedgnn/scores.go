package cefedgnn

import (
	"strconv"

	"graphfed/gnn"
)

// Per-class counts travel with a client's scores so that the job can pool
// them into one macro-F1 over the union of every client's test nodes
// (job's test_macro_f1_pooled) besides the mean of the clients' own
// macro-F1 (test_macro_f1). With 16 Louvain clients of Cora most clients
// see three to six of the seven classes in their test nodes, some with
// one or two nodes, so the two differ by far more than noise: the mean
// scores each client on its own classes, the pooled figure scores the
// model on all of them at once.

// ClassCountKey is the score key of a per-class count: prefix ("test_"),
// then "class_<k>_" and kind ("tp", "fp" or "fn"). A client reports the
// three counts of every class of the model, zeros included.
func ClassCountKey(prefix string, class int, kind string) string {
	return prefix + "class_" + strconv.Itoa(class) + "_" + kind
}

// classCounts are the true-positive, false-positive and false-negative
// counts per class of the arg-max predictions of logits (N×C) over the
// nodes i with mask[i] and labels[i] ≥ 0, the nodes gnn.Score scores.
// The arg-max takes the first of equal maxima, as gnn.Score does, so the
// macro-F1 of these counts is gnn.Score's MacroF1.
func classCounts(logits *gnn.Tensor, labels []int32, mask []bool) (tp, fp, fn []int) {
	c := logits.Cols
	tp, fp, fn = make([]int, c), make([]int, c), make([]int, c)
	for i := range logits.Rows {
		y := labels[i]
		if y < 0 || (mask != nil && !mask[i]) {
			continue
		}
		row := logits.Row(i)
		pred := 0
		for j, v := range row {
			if v > row[pred] {
				pred = j
			}
		}
		if int(y) == pred {
			tp[y]++
		} else {
			fp[pred]++
			fn[y]++
		}
	}
	return tp, fp, fn
}

// putClassCounts writes the counts into scores under prefix
// (ClassCountKey).
func putClassCounts(scores map[string]float64, prefix string, tp, fp, fn []int) {
	for k := range tp {
		scores[ClassCountKey(prefix, k, "tp")] = float64(tp[k])
		scores[ClassCountKey(prefix, k, "fp")] = float64(fp[k])
		scores[ClassCountKey(prefix, k, "fn")] = float64(fn[k])
	}
}
