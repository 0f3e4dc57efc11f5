package edgegnn

import (
	"fmt"

	"graphfed/gnn"
)

// Scores summarises predictions of a binary edge classifier, class 1
// (laundering) being the rare positive class. Predictions are the arg-max
// of the logits. F1 of the positive class is the AML metric.
type Scores struct {
	F1        float64 // 2TP/(2TP+FP+FN) of class 1; 0 when TP = 0
	Precision float64 // TP/(TP+FP); 0 when nothing is predicted positive
	Recall    float64 // TP/(TP+FN); 0 when there are no positives
	Acc       float64 // fraction of edges predicted right
	Loss      float64 // mean unweighted softmax cross-entropy
	Count     int     // edges scored
	TP, FP    int
	FN, TN    int
}

// String formats the scores for logs.
func (s Scores) String() string {
	return fmt.Sprintf("f1=%.4f precision=%.4f recall=%.4f acc=%.4f loss=%.4f n=%d tp=%d fp=%d fn=%d",
		s.F1, s.Precision, s.Recall, s.Acc, s.Loss, s.Count, s.TP, s.FP, s.FN)
}

// edgeTally accumulates Scores over batches.
type edgeTally struct {
	tp, fp, fn, tn int
	loss           float64
}

// add counts the rows of logits (n×C, C ≥ 2) with labels (len n, 0 or 1).
func (t *edgeTally) add(logits *gnn.Tensor, labels []int32) {
	if logits.Rows != len(labels) || logits.Cols < 2 {
		gnn.ShapePanic("score edges", "logits %v for %d labels", logits, len(labels))
	}
	if len(labels) == 0 {
		return
	}
	t.loss += gnn.SoftmaxCrossEntropy(logits, labels, nil, nil, nil) * float64(len(labels))
	for i, y := range labels {
		row := logits.Row(i)
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		pos := best == 1
		switch {
		case pos && y == 1:
			t.tp++
		case pos:
			t.fp++
		case y == 1:
			t.fn++
		default:
			t.tn++
		}
	}
}

func (t *edgeTally) scores() Scores {
	s := Scores{TP: t.tp, FP: t.fp, FN: t.fn, TN: t.tn, Count: t.tp + t.fp + t.fn + t.tn}
	if s.Count == 0 {
		return s
	}
	s.Loss = t.loss / float64(s.Count)
	s.Acc = float64(t.tp+t.tn) / float64(s.Count)
	if t.tp > 0 {
		s.F1 = 2 * float64(t.tp) / float64(2*t.tp+t.fp+t.fn)
		s.Precision = float64(t.tp) / float64(t.tp+t.fp)
		s.Recall = float64(t.tp) / float64(t.tp+t.fn)
	}
	return s
}

// ScoreEdges computes Scores from logits (n×C) and labels (len n, each
// 0 or 1).
func ScoreEdges(logits *gnn.Tensor, labels []int32) Scores {
	var t edgeTally
	t.add(logits, labels)
	return t.scores()
}

// ClassWeights returns the loss weights of the two classes from the
// labels of the training edges: 1 for class 0 and the inverse relative
// frequency n0/n1 for class 1, capped at limit (no cap when limit ≤ 0).
// Without positive edges the weight is limit (1 without a cap); without
// negative ones it is 1.
// Heavy weights trade precision for recall; Multi-GNN's tuned value on
// HI-Small is about 6.
func ClassWeights(labels []uint8, limit float64) []float32 {
	var n [2]int
	for _, y := range labels {
		n[min(int(y), 1)]++
	}
	w := 1.0
	switch {
	case n[0] > 0 && n[1] > 0:
		w = float64(n[0]) / float64(n[1])
		if limit > 0 {
			w = min(w, limit)
		}
	case n[1] == 0 && limit > 0:
		w = limit
	}
	return []float32{1, float32(w)}
}
