package main

import (
	"github.com/spf13/pflag"

	"graphfed/aggregator"
	"graphfed/job"
)

// The aggregation strategy's flag groups that `graphfed aggregator` and
// `graphfed sim` share: the robust rule and the LPSFed reference graph.

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

// recFlags are the aggregator's settings of a recommendation job: the
// one definition `aggregator` and `sim --lightgcn` share.
type recFlags struct {
	phi, freeze, refEvery    int
	strict                   bool
	strictUsers, strictItems int
	strictEdges              int
}

// registerReference adds the reference-graph and freezing flags (Φ is
// registered by each command: its help differs).
func (rf *recFlags) registerReference(f *pflag.FlagSet) {
	d := job.DefaultAggregatorSpec()
	f.IntVar(&rf.freeze, "freeze-rounds", d.FreezeRounds, "rec: first rounds in which nothing is distributed")
	f.IntVar(&rf.refEvery, "ref-every", d.LPSFed.RefEvery, "rec: rebuild the GNMK reference every N rounds (0: once)")
	f.BoolVar(&rf.strict, "strict", d.LPSFed.Strict, "rec: build the reference from the assumed counts below, clients send none")
	f.IntVar(&rf.strictUsers, "strict-users", d.LPSFed.StrictStats.Users, "rec strict mode: assumed users per client")
	f.IntVar(&rf.strictItems, "strict-items", d.LPSFed.StrictStats.Items, "rec strict mode: assumed items per client")
	f.IntVar(&rf.strictEdges, "strict-edges", d.LPSFed.StrictStats.Edges, "rec strict mode: assumed interactions per client")
}

// config is the LPSFed strategy's configuration from the flags.
func (rf *recFlags) config(seed uint64) aggregator.LPSFedConfig {
	return aggregator.LPSFedConfig{Phi: rf.phi, Strict: rf.strict, RefEvery: rf.refEvery, Seed: seed,
		StrictStats: aggregator.ReferenceStats{Users: rf.strictUsers, Items: rf.strictItems, Edges: rf.strictEdges}}
}
