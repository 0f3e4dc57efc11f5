package job

import (
	"maps"
	"math"
	"slices"
	"sort"

	"graphfed/aggregator"
)

// The clients report their scores as named numbers (learner.Scores); these
// helpers pool them the one way every report does.

// meanScore averages key over clients, unweighted ("mean client
// accuracy"), over the clients that reported it as a number.
func meanScore(scores map[string]map[string]float64, key string) (float64, int) {
	var sum float64
	n := 0
	for _, id := range slices.Sorted(maps.Keys(scores)) {
		if v, ok := scores[id][key]; ok && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// stdScore is the sample standard deviation of key over clients around
// mean; 0 with fewer than two.
func stdScore(scores map[string]map[string]float64, key string, mean float64) float64 {
	var ss float64
	n := 0
	for _, id := range slices.Sorted(maps.Keys(scores)) { // one summation order: the same bits every run
		if v, ok := scores[id][key]; ok && !math.IsNaN(v) {
			ss += (v - mean) * (v - mean)
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return math.Sqrt(ss / float64(n-1))
}

// weightedScore averages key weighted by the count in weightKey: the score
// over the union of the clients' evaluation nodes (or users).
func weightedScore(scores map[string]map[string]float64, key, weightKey string) float64 {
	var sum, w float64
	for _, id := range slices.Sorted(maps.Keys(scores)) {
		sc := scores[id]
		sum += sc[key] * sc[weightKey]
		w += sc[weightKey]
	}
	if w == 0 {
		return 0
	}
	return sum / w
}

// meanOf averages score over the clients whose score is a number; NaN
// when none is.
func meanOf(scores map[string]map[string]float64, score func(map[string]float64) float64) float64 {
	var sum float64
	n := 0
	for _, id := range slices.Sorted(maps.Keys(scores)) {
		if v := score(scores[id]); !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// nodeScore is a client's test score in the dataset's metric: test_score,
// or test_acc from a learner that reports accuracy only (CE-FedGNN's);
// NaN when it reported neither.
func nodeScore(sc map[string]float64) float64 {
	if v, ok := sc["test_score"]; ok {
		return v
	}
	if v, ok := sc["test_acc"]; ok {
		return v
	}
	return math.NaN()
}

// keyScore is a client's score under key, NaN when it reported none.
func keyScore(key string) func(map[string]float64) float64 {
	return func(sc map[string]float64) float64 {
		if v, ok := sc[key]; ok {
			return v
		}
		return math.NaN()
	}
}

// putClientScores adds the node-classification scores in the dataset's
// metric (accuracy or roc_auc) to a report: the mean over clients,
// unweighted, and their standard deviation, of the final model's test
// score (test_score) and of the test score at each client's best
// validation round (test_at_best_val: FedGSP's protocol, which scores a
// client's locally updated model after every round of local training),
// and each client's pair under clients. The validation means beside them
// (val_score, best_val_score) are what settings are chosen by.
func putClientScores(m map[string]any, metric string, final map[string]map[string]float64) {
	m["metric"] = metric
	for _, key := range []string{"test_score", "test_at_best_val", "val_score", "best_val_score"} {
		mean, _ := meanScore(final, key)
		m[key] = mean
		m[key+"_std"] = stdScore(final, key, mean)
	}
	ids := make([]string, 0, len(final))
	for id := range final {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	clients := make(map[string]map[string]any, len(ids))
	for _, id := range ids {
		clients[id] = map[string]any{"test_score": finiteOrNil(final[id]["test_score"]), "test_at_best_val": finiteOrNil(final[id]["test_at_best_val"])}
	}
	m["clients"] = clients
}

// finiteOrNil is v, or nil (JSON null) when v is NaN or infinite: a
// client whose validation or test nodes hold one class has no ROC-AUC.
func finiteOrNil(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// putLedgerRate adds how fast the ledger took the appends.
func putLedgerRate(metrics map[string]any, lr LedgerRate) {
	if lr.Appends > 0 {
		metrics["ledger_appends_per_s"], metrics["ledger_appends_per_s_slowest_round"] = lr.PerSecond, lr.SlowestRound
	}
}

// putServerOpt names the server optimizer that ran (with its
// hyper-parameters) in a report's metrics; nothing without one.
func putServerOpt(metrics map[string]any, o aggregator.ServerOpt) {
	if o.Rule != aggregator.ServerOptNone {
		metrics["server_opt"] = o.String()
	}
}

// putRobust adds RobustMetrics to a report's metrics.
func putRobust(metrics map[string]any, r aggregator.Robust, res aggregator.Result) {
	for k, v := range RobustMetrics(r, res) {
		metrics[k] = v
	}
}
