package job

import (
	"fmt"

	"graphfed/aggregator"
)

// secAggSummary is what a job's summary says of its secure aggregation,
// from the aggregator's closes and the banks' final scores: whether it was
// on, in how many rounds the aggregator saw only a sum (and of how many
// banks, at what threshold), why the others had none, and the protocol's
// time at the aggregator and at the banks against the rounds' own.
func secAggSummary(on bool, closes []aggregator.RoundClosed, final map[string]map[string]float64) map[string]any {
	if !on {
		return map[string]any{"on": false,
			"aggregator_saw": "each bank's update as released (secure aggregation off)"}
	}
	var secure, failed, minSurv, t, cohort int
	var aggSec, roundSec float64
	var failures []string
	for _, rc := range closes {
		sa := rc.SecAgg
		if sa == nil {
			continue
		}
		roundSec += rc.Duration.Seconds()
		aggSec += sa.Seconds
		if sa.Failure != "" {
			failed++
			failures = append(failures, fmt.Sprintf("round %d: %s", rc.Round, sa.Failure))
			continue
		}
		secure++
		if minSurv == 0 || len(sa.Survivors) < minSurv {
			minSurv = len(sa.Survivors)
		}
		t, cohort = max(t, sa.Threshold), max(cohort, sa.Cohort)
	}
	var bankSec float64
	banks := 0
	for _, sc := range final {
		if s, ok := sc["secagg_seconds"]; ok {
			bankSec += s
			banks++
		}
	}
	out := map[string]any{"on": true, "rounds_secure": secure, "rounds_without_sum": failed, "threshold": t, "cohort": cohort,
		"survivors_min": minSurv, "aggregator_seconds": aggSec, "round_seconds": roundSec,
		"aggregator_saw": fmt.Sprintf("the sum of %d or more banks' updates, never one bank's (t = %d of %d: a bank's update is recoverable only if %d banks collude with the aggregator)",
			minSurv, t, cohort, t),
		"note": "secure aggregation hides each update in the sum; it adds no DP guarantee to the sum (the model channel's ε is unchanged), and a bank can still bias the sum within its clip"}
	if banks > 0 {
		out["bank_seconds_mean"] = bankSec / float64(banks)
		if roundSec > 0 {
			out["crypto_share_of_round_time"] = (aggSec + bankSec/float64(banks)) / roundSec
		}
	}
	if len(failures) > 0 {
		out["failures"] = failures
	}
	return out
}
