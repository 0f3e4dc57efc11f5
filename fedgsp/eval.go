package fedgsp

import "graphfed/gnn"

// Evaluate scores the current parameters on the local val and test nodes.
// Keys (contract): val_score/test_score in the configured metric,
// val_acc/test_acc, val_n/test_n, and best_val_score/test_at_best_val as
// tracked over the evaluations Train runs after each local update (the
// current scores until the first Train).
func (l *Learner) Evaluate() map[string]float64 {
	val, valAcc := l.score(l.wsVal, l.valIn, l.valLabels())
	test, testAcc := l.score(l.wsTest, l.tstIn, l.testLabels())
	best, atBest := val, test
	if l.tracked {
		best, atBest = l.bestVal, l.testAtB
	}
	return map[string]float64{
		"val_score": val, "test_score": test,
		"val_acc": valAcc, "test_acc": testAcc,
		"val_n": float64(l.nVal), "test_n": float64(l.nTest),
		"best_val_score": best, "test_at_best_val": atBest,
	}
}

// score returns the configured metric and the accuracy of the model (no
// dropout) on rows with labels. No rows score 0. ROC-AUC on rows of one
// class only has no ranking to measure: it is NaN then, as for the node
// learners (gnn.BinaryAUC), so that a report's mean over clients leaves
// the client out instead of counting it at chance; Train never takes a
// NaN validation score as the best.
func (l *Learner) score(ws *workspace, in []*gnn.Tensor, labels []int32) (metric, acc float64) {
	if len(labels) == 0 {
		return 0, 0
	}
	logits := l.m.forward(ws, in, false, nil)
	pred := gnn.ArgMax(logits, nil)
	hit := 0
	for i, y := range labels {
		if pred[i] == y {
			hit++
		}
	}
	acc = float64(hit) / float64(len(labels))
	if l.cfg.Metric != MetricROCAUC {
		return acc, acc
	}
	scores := make([]float64, len(labels))
	pos := make([]bool, len(labels))
	for i, y := range labels {
		row := logits.Row(i)
		// The margin z₁ − z₀ orders nodes as p(class 1) = σ(z₁ − z₀) does,
		// without the sigmoid's saturation into ties.
		scores[i] = float64(row[1]) - float64(row[0])
		pos[i] = y == 1
	}
	return gnn.ROCAUC(scores, pos), acc
}
