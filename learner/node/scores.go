package node

import (
	"math"

	"graphfed/gnn"
	"graphfed/graph"
)

// nodeScores are one evaluation of a node learner's current parameters:
// val and test in the learner's metric, and accuracy beside them.
type nodeScores struct {
	val, test       float64
	valAcc, testAcc float64
	testF1          float64
	valN, testN     int
}

func (l *Learner) scores() nodeScores {
	logits := l.model.Forward(l.in, false, nil)
	te := gnn.Score(logits, l.data.Labels, l.test)
	va := gnn.Score(logits, l.data.Labels, l.val)
	sc := nodeScores{val: va.Acc, test: te.Acc, valAcc: va.Acc, testAcc: te.Acc, testF1: te.MacroF1, valN: va.Count, testN: te.Count}
	if l.metric == graph.MetricROCAUC {
		sc.val = gnn.BinaryAUC(logits, l.data.Labels, l.val)
		sc.test = gnn.BinaryAUC(logits, l.data.Labels, l.test)
	}
	return sc
}

// bestVal keeps the test score at the best validation score observed. A
// client whose validation nodes hold one class has a NaN AUC: it never
// counts as best, and the client reports NaN until it has a score.
type bestVal struct {
	seen      bool
	val, test float64
}

func (b *bestVal) observe(sc nodeScores) {
	if math.IsNaN(sc.val) {
		return
	}
	if !b.seen || sc.val > b.val {
		b.seen, b.val, b.test = true, sc.val, sc.test
	}
}

func (b *bestVal) put(out map[string]float64) {
	if !b.seen {
		out["best_val_score"], out["test_at_best_val"] = math.NaN(), math.NaN()
		return
	}
	out["best_val_score"], out["test_at_best_val"] = b.val, b.test
}
