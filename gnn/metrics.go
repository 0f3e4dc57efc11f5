package gnn

import "fmt"

// Scores summarises predictions on a set of nodes.
type Scores struct {
	Acc float64 // fraction of nodes whose arg-max class is the label
	// MacroF1 is the unweighted mean of per-class F1 = 2TP/(2TP+FP+FN)
	// over the classes that occur in the labels or the predictions of the
	// scored nodes (scikit-learn's f1_score(average="macro")); a class
	// that neither occurs nor is predicted does not count.
	MacroF1 float64
	Loss    float64 // mean softmax cross-entropy, unweighted
	Count   int     // nodes scored: in the mask and labelled
}

// String formats the scores for logs.
func (s Scores) String() string {
	return fmt.Sprintf("acc=%.4f macro_f1=%.4f loss=%.4f n=%d", s.Acc, s.MacroF1, s.Loss, s.Count)
}

// Score computes Scores from logits (N×C) for the nodes i with mask[i]
// (nil means all) and labels[i] ≥ 0. All zero when no node counts.
func Score(logits *Tensor, labels []int32, mask []bool) Scores {
	n, c := logits.Rows, logits.Cols
	if len(labels) != n || (mask != nil && len(mask) != n) {
		ShapePanic("score", "logits %dx%d, %d labels, %d mask", n, c, len(labels), len(mask))
	}
	s := Scores{Loss: SoftmaxCrossEntropy(logits, labels, mask, nil, nil)}
	tp := make([]int, c)
	fp := make([]int, c)
	fn := make([]int, c)
	correct := 0
	for i := 0; i < n; i++ {
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
		s.Count++
		if int(y) == pred {
			correct++
			tp[y]++
		} else {
			fp[pred]++
			fn[y]++
		}
	}
	if s.Count == 0 {
		return Scores{}
	}
	s.Acc = float64(correct) / float64(s.Count)
	var f1 float64
	classes := 0
	for k := 0; k < c; k++ {
		if 2*tp[k]+fp[k]+fn[k] > 0 {
			f1 += F1(float64(tp[k]), float64(fp[k]), float64(fn[k]))
			classes++
		}
	}
	s.MacroF1 = f1 / float64(classes)
	return s
}

// F1 is the F1 score of counts of true positives, false positives and
// false negatives, 2tp / (2tp + fp + fn), and 0 when tp is 0: the one F1
// formula of graphfed, for every model, threshold and pooling.
func F1(tp, fp, fn float64) float64 {
	if tp == 0 {
		return 0
	}
	return 2 * tp / (2*tp + fp + fn)
}
