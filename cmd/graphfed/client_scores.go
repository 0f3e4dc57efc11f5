package main

import (
	"math"
	"sort"
)

// putClientScores adds the node-classification scores in the dataset's
// metric (accuracy or roc_auc) to a sim report: the mean over clients,
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
