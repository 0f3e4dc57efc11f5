package job

import (
	"fmt"

	"graphfed/aggregator"
)

// Secure aggregation modes (--secagg).
const (
	SecAggAuto = "auto" // on wherever the algorithm's close is a sum; the default
	SecAggOn   = "on"
	SecAggOff  = "off"
)

// resolveSecAgg turns a --secagg mode into whether the job aggregates
// securely. Auto (or empty) is on for every algorithm whose close is a
// sum of the parties' updates, and off for local (nothing is shared) and
// fedgsp (its collaboration graph needs each client's own model; see
// aggregator.SecAgg): the job's summary says which, and why. On with one
// of those is an error, from the aggregator's configuration. A party
// that cannot sign (canSign: no keyring and seed, outside an in-process
// simulation) has auto off: a plain deployment runs in the clear, and
// says so.
func resolveSecAgg(mode, algo string, robust aggregator.Robust, canSign bool) (bool, error) {
	switch mode {
	case "", SecAggAuto:
		return canSign && SecAggSums(algo) && robust.Rule == aggregator.RobustNone, nil
	case SecAggOn:
		return true, nil
	case SecAggOff:
		return false, nil
	}
	return false, fmt.Errorf("--secagg %q: want %s, %s or %s", mode, SecAggAuto, SecAggOn, SecAggOff)
}

// SecAggSums reports whether algo's close is a sum that secure
// aggregation can carry.
func SecAggSums(algo string) bool {
	switch algo {
	case aggregator.AlgoFedAvg, aggregator.AlgoFedProx, aggregator.AlgoFedPer, aggregator.AlgoCEFedGNN, aggregator.AlgoFedGNNST,
		aggregator.AlgoLPSFed, aggregator.AlgoLPSFedBPR:
		return true
	}
	return false
}
