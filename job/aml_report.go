package job

import (
	"context"
	"math"
	"path/filepath"
	"time"

	"graphfed/aml/eval"
	"graphfed/runreport"
)

// amlSummary is an AML job's report: the banks' pooled test F1,
// precision and recall at their own thresholds and at the pooled
// operating point, the recall by typology, and the world and learner
// that ran.
func amlSummary(res AMLResult, sc SimConfig) runreport.Summary {
	s, plan := res.Scores, res.Plan
	metrics := map[string]any{"test_f1_illicit": s.TestF1, "test_precision_illicit": s.TestPrecision, "test_recall_illicit": s.TestRecall,
		"val_f1_illicit": s.ValF1, "test_f1_illicit_tuned": s.TunedF1, "rows": plan.Rows, "gnn": plan.Learner.Kind,
		"k": plan.LocalSteps, "rejects": res.Sim.Agg.Rejects, "peak_rss_mib": runreport.PeakRSSMiB()}
	putRobust(metrics, sc.Robust, res.Sim.Agg)
	putServerOpt(metrics, sc.ServerOpt)
	putPooled(metrics, s)
	if s.Typology != nil {
		metrics["test_recall_by_typology"] = s.Typology
	}
	sum := simSummary(sc, res.Dataset, plan.Banks, res.Sim, plan.Privacy, metrics)
	return sum
}

// putPooled adds the F1 at the threshold chosen on the banks' pooled
// validation counts, when the banks reported grid counts.
func putPooled(metrics map[string]any, sc eval.Scores) {
	if !sc.HasPooled {
		return
	}
	op := sc.Pooled
	metrics["test_f1_illicit_pooled"] = op.TestF1
	metrics["test_precision_illicit_pooled"] = op.TestPrecision
	metrics["test_recall_illicit_pooled"] = op.TestRecall
	metrics["val_f1_illicit_pooled"] = op.ValF1
	metrics["threshold_pooled"] = op.Threshold
}

// valF1 is one bank's validation F1 from its counts, NaN when it scored
// nothing that round.
func valF1(sc map[string]float64) float64 {
	if sc == nil || sc["val_tp"]+sc["val_fp"]+sc["val_fn"] == 0 {
		return math.NaN()
	}
	f1, _, _ := eval.PooledF1(map[string]map[string]float64{"": sc}, "val_")
	return f1
}

// writeAMLRun writes the run directory (runreport.WriteRun) and the F1
// plot.
func writeAMLRun(ctx context.Context, spec AMLSpec, sc SimConfig, res AMLResult, start time.Time) error {
	rows := make([]runreport.Round, len(res.Rounds))
	var xs, ys []float64
	for i, r := range res.Rounds {
		rows[i] = roundOf(r.Close, r.ValF1)
		withProgress(&rows[i], r.Progress)
		if !math.IsNaN(r.ValF1) {
			xs, ys = append(xs, float64(r.Close.Round)), append(ys, r.ValF1)
		}
	}
	files := runFiles(res.Summary, spec.Settings, spec.Changed, start, res.Sim, res.Plan.Privacy, "val_f1_illicit", rows, valF1)
	effective(files.Summary.Settings, sc)
	if err := runreport.WriteRun(ctx, spec.Out, files); err != nil {
		return err
	}
	return runreport.WriteLinePNG(filepath.Join(spec.Out, "f1.png"), "laundering-class F1 (validation, model at round start)", "F1 (pooled over banks)",
		[]runreport.Series{{Name: res.Summary.Algo, X: xs, Y: ys}})
}
