package amllearner

import (
	"fmt"
	"math/rand/v2"

	"graphfed/aml/edgegnn"
	"graphfed/aml/eval"
	"graphfed/learner"
)

// DefaultEvalSample bounds the per-round evaluation: at most this many
// legitimate transactions of each split are scored, beside every
// laundering one.
const DefaultEvalSample = 8192

// score runs seeds through the evaluation stage with a fixed sample and
// returns each transaction's positive-class margin and its label; done, if
// set, hears how many seeds are scored after each batch. Batches are of
// the training size: the model keeps the storage of its largest batch, so
// larger evaluation batches would hold several times a training step's
// memory for the rest of the job (at 5M rows, over 1 GiB across 8 banks).
func (l *Learner) score(seeds []int32, done func(n int)) ([]float32, []int32) {
	chunkSize := l.cfg.BatchSize
	rng := rand.New(rand.NewPCG(l.cfg.Seed, 0xe7a1))
	labels := make([]int32, 0, len(seeds))
	margins := make([]float32, 0, len(seeds))
	var chunkLabels []int32
	var chunkMargins []float32
	for lo := 0; lo < len(seeds); lo += chunkSize {
		chunk := seeds[lo:min(lo+chunkSize, len(seeds))]
		w := l.work.Acquire(l.model) // a worker per batch: banks take turns on the cores
		var err error
		if chunkLabels, err = l.evalSt.BatchOn(w, chunk, chunkLabels, rng); err != nil {
			panic(fmt.Sprintf("agent: aml learner: sampling evaluation seeds: %v", err))
		}
		chunkMargins = edgegnn.Margins(w.Model().Forward(&w.Batch, l.layerOverrides(&w.Batch, false), false, nil), chunkMargins)
		l.work.Release(w)
		for i := range chunkMargins {
			chunkMargins[i] += l.shift
		}
		labels = append(labels, chunkLabels...)
		margins = append(margins, chunkMargins...)
		if done != nil {
			done(len(chunk))
		}
	}
	return margins, labels
}

// putCounts writes a confusion matrix under prefix, legitimate
// transactions weighed by negScale, and its F1.
func putCounts(out map[string]float64, prefix string, s edgegnn.Scores, negScale float64) {
	out[prefix+"tp"], out[prefix+"fp"] = float64(s.TP), float64(s.FP)*negScale
	out[prefix+"fn"], out[prefix+"tn"] = float64(s.FN), float64(s.TN)*negScale
	out[prefix+"f1_illicit"] = edgegnn.WeightedF1(s, negScale)
}

// Evaluate implements Learner: the per-round validation score of the
// current model, bounded whatever the bank's size. Every laundering
// transaction of the bank's home validation transactions is scored, with a
// fixed sample of at most EvalSample legitimate ones; the counts are weighed
// back to the whole split, so pooled F1 estimates the full one. Test
// transactions wait for the final model, which is scored on everything
// (EvaluateFinal).
func (l *Learner) Evaluate() map[string]float64 {
	out := map[string]float64{}
	m, lab := l.score(l.valSample.Seeds, nil)
	putCounts(out, "val_", edgegnn.CountAt(m, lab, 0), l.valSample.NegScale)
	return out
}

// EvaluateFinal implements FinalEvaluator: every home validation and test
// transaction, in batches, with progress through Config.OnFinalScore.
// Counts pool across banks; F1 is at the arg-max decision, and test_tuned_
// counts use the threshold that maximizes this bank's validation F1 (with a
// few dozen validation positives per bank that threshold is itself noisy,
// so it is reported beside the arg-max, not instead of it); val_g<j>_ and
// test_g<j>_ counts at every threshold of edgegnn.DecisionGrid let the job
// choose one threshold on the pooled validation counts of all banks
// (eval.PooledOperatingPoint). With typologies
// known (Data.Typology, evaluation labels like the laundering flag), the
// laundering test transactions of each typology and those flagged at
// arg-max are counted as test_typ_<name>_pos and _tp.
func (l *Learner) EvaluateFinal() map[string]float64 {
	total, n := len(l.val)+len(l.test), 0
	done := func(k int) {
		n += k
		if l.cfg.OnFinalScore != nil {
			l.cfg.OnFinalScore(n, total)
		}
	}
	out := map[string]float64{}
	vm, vl := l.score(l.val, done)
	tm, tl := l.score(l.test, done)
	thr, _, err := edgegnn.BestThreshold(vm, vl)
	if err != nil {
		panic(fmt.Sprintf("agent: aml learner: %v", err))
	}
	out["threshold"] = float64(thr)
	putCounts(out, "val_", edgegnn.CountAt(vm, vl, 0), 1)
	putCounts(out, "test_", edgegnn.CountAt(tm, tl, 0), 1)
	putCounts(out, "test_tuned_", edgegnn.CountAt(tm, tl, thr), 1)
	grid := edgegnn.DecisionGrid()
	if err := eval.PutGridCounts(out, "val", grid, vm, vl); err != nil {
		panic(fmt.Sprintf("agent: aml learner: %v", err))
	}
	if err := eval.PutGridCounts(out, "test", grid, tm, tl); err != nil {
		panic(fmt.Sprintf("agent: aml learner: %v", err))
	}
	if typ := l.d.Typology; typ != nil {
		for i, e := range l.test {
			if tl[i] == 0 {
				continue
			}
			name := eval.TypologyKey(typ[e])
			out["test_typ_"+name+"_pos"]++
			if tm[i] > 0 {
				out["test_typ_"+name+"_tp"]++
			}
		}
	}
	return out
}

var _ learner.ScoreLogger = (*Learner)(nil)

// LogScores leaves the grid counts out of the scores the agent logs
// (learner.ScoreLogger).
func (l *Learner) LogScores(scores map[string]float64) (map[string]float64, int) {
	return eval.WithoutGridCounts(scores)
}
