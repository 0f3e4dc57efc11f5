package job

import (
	"fmt"
	"maps"
	"time"

	"graphfed/aggregator"
	"graphfed/aml/eval"
	"graphfed/deploy"
)

// aggregatorMetrics are a deployed aggregator's report metrics for a job
// of task: the clients' mean final scores, the rounds' closes, what was
// refused and dropped, the model's digest and the ledger's heads.
func aggregatorMetrics(task string, robust aggregator.Robust, res aggregator.Result) (map[string]any, error) {
	metrics := map[string]any{"task": task}
	for _, k := range []string{"test_acc", "test_macro_f1", "test_score", "test_at_best_val", "test_f1_illicit", "recall_at_20", "ndcg_at_20"} {
		if v, n := meanScore(res.Final, k); n > 0 {
			metrics[k] = v
		}
	}
	if task == deploy.TaskAML {
		sc, err := eval.Score(res.Final)
		if err != nil {
			return nil, err
		}
		metrics["test_f1_illicit"], metrics["test_precision_illicit"], metrics["test_recall_illicit"] = sc.TestF1, sc.TestPrecision, sc.TestRecall
		putPooled(metrics, sc)
	}
	if task == deploy.TaskNode {
		putPooledMacroF1(metrics, res.Final)
	}
	// test_acc and test_macro_f1 stay in the report for every task
	// (scripts read them; 0 when no client scores them).
	acc, _ := meanScore(res.Final, "test_acc")
	f1, _ := meanScore(res.Final, "test_macro_f1")
	deadline := 0
	for _, c := range res.Closes {
		if c.Reason == "deadline" {
			deadline++
		}
	}
	maps.Copy(metrics, map[string]any{"test_acc": acc, "test_macro_f1": f1, "clients_reporting": len(res.Final),
		"rounds_closed_at_deadline": deadline, "rejects": res.Rejects, "rejects_by": res.RejectsBy, "dropped": res.Dropped,
		"model_sha256": aggregator.ResultDigest(res), "resumed": res.Resumed, "resumed_round": res.ResumedRound, "run": res.Run,
		"flow": res.Flow})
	maps.Copy(metrics, RobustMetrics(robust, res))
	secure := false
	for _, c := range res.Closes {
		secure = secure || c.SecAgg != nil
	}
	metrics["secagg"] = secAggSummary(secure, res.Closes, res.Final)
	if len(res.SecAggRefused) > 0 {
		metrics["secagg_refused"] = res.SecAggRefused
	}
	if res.Stopped != "" {
		metrics["stopped"] = res.Stopped
	}
	if len(res.Heads) > 0 {
		// Every chain's final head, the aggregator's own included:
		// graphfed audit --expect-heads checks the ledger reaches them,
		// which no record in the ledger can vouch for alone.
		metrics["ledger_heads"] = res.Heads
	}
	return metrics, nil
}

// RobustMetrics are a report's metrics of a robust aggregation rule: the
// rule, its trim, and what it set aside per bank
// (aggregator.Result.SetAside); none under the mean.
func RobustMetrics(r aggregator.Robust, res aggregator.Result) map[string]any {
	if r.Rule == aggregator.RobustNone {
		return nil
	}
	m := map[string]any{"robust": r.Rule, "robust_set_aside": res.SetAside}
	if r.Rule == aggregator.RobustTrimmed {
		m["robust_trim"] = r.Trim
	}
	return m
}

// RoundBudgetNote is a progress line's note of an adapted round: how long
// it was allowed, and how often it was extended for being empty.
func RoundBudgetNote(rc aggregator.RoundClosed) string {
	switch {
	case rc.Budget == 0:
		return ""
	case rc.Extensions > 0:
		return fmt.Sprintf(" budget=%v (extended %d×)", rc.Budget.Round(time.Millisecond), rc.Extensions)
	}
	return fmt.Sprintf(" budget=%v", rc.Budget.Round(time.Millisecond))
}
