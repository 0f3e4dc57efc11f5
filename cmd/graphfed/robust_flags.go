package main

import (
	"github.com/spf13/pflag"

	"graphfed/aggregator"
)

// robustFlags choose the averaging algorithms' aggregation rule
// (aggregator.Robust), the same two flags on `graphfed aggregator` and
// `graphfed sim` (and so the same keys in a job file).
type robustFlags struct {
	rule string
	trim int
}

func (r *robustFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.rule, "robust", "", "robust aggregation of the averaging algorithms: median, trimmed (with --robust-trim) or normclip (default: the sample-weighted mean)")
	f.IntVar(&r.trim, "robust-trim", 0, "--robust trimmed: the largest and the smallest values dropped from each coordinate")
}

// robust is the rule the flags state; the aggregator's configuration
// checks it (a rule it does not know, a trim without trimmed).
func (r *robustFlags) robust() aggregator.Robust {
	return aggregator.Robust{Rule: r.rule, Trim: r.trim}
}

// putRobust adds the rule and what it set aside per bank
// (aggregator.Result.SetAside) to a report's metrics, when a rule is on.
func putRobust(metrics map[string]any, r aggregator.Robust, res aggregator.Result) {
	if r.Rule == aggregator.RobustNone {
		return
	}
	metrics["robust"], metrics["robust_set_aside"] = r.Rule, res.SetAside
	if r.Rule == aggregator.RobustTrimmed {
		metrics["robust_trim"] = r.Trim
	}
}
