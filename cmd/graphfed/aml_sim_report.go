package main

import (
	"graphfed/aml/eval"
)

// putAMLScores adds an AML job's pooled test F1, precision and recall and
// its pooled operating point to a report's metrics.
func putAMLScores(metrics map[string]any, sc eval.Scores) {
	metrics["test_f1_illicit"], metrics["test_precision_illicit"], metrics["test_recall_illicit"] = sc.TestF1, sc.TestPrecision, sc.TestRecall
	putPooled(metrics, sc)
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
