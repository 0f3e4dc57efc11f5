package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/aggregator"
	"graphfed/job"
)

// The aggregation strategy's flag groups: the round deadline, the robust
// rule and the LPSFed reference graph, which `graphfed aggregator` and
// `graphfed sim` share (and so the same keys in a job file), and the
// aggregator's job contract.

// registerDeadlineFlags adds --deadline-factor and --deadline-cap
// (aggregator.Config.DeadlineFactor, DeadlineCap).
func registerDeadlineFlags(cmd *cobra.Command, factor *float64, limit *time.Duration) {
	f := cmd.Flags()
	f.Float64Var(factor, "deadline-factor", job.DefaultDeadlineFactor,
		"adaptive round deadline: this many times the median measured update time, never below --round-timeout; "+
			"a round with nothing in is extended while clients are live, up to --deadline-cap (0: fixed deadline)")
	f.DurationVar(limit, "deadline-cap", 0,
		fmt.Sprintf("longest a round may stay open with --deadline-factor (0: %d × --round-timeout)", aggregator.DefaultDeadlineCapX))
}

// robustFlags choose the averaging algorithms' aggregation rule
// (aggregator.Robust).
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

// serverOptFlags choose the averaging algorithms' server optimizer
// (aggregator.ServerOpt). A hyper-parameter not given (nil) is the rule's
// default (aggregator.DefaultServerOpt, Flower's): zero cannot stand for
// "not given", since a zero momentum or β1 is meaningful.
type serverOptFlags struct {
	rule                       string
	lr, mom, beta1, beta2, tau *float64
}

func (o *serverOptFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.rule, "server-opt", "", "server optimizer of the averaging algorithms, stepping the global model towards the round's mean: "+
		"fedavgm, fedadam, fedyogi or fedadagrad (Reddi et al. 2021; default: none, the mean is the new model)")
	f.Var(unsetFloat(&o.lr), "server-lr", "--server-opt: server learning rate η (default: fedavgm 1, the others 0.1)")
	f.Var(unsetFloat(&o.mom), "server-momentum", "--server-opt fedavgm: server momentum μ (default 0.9; 0 is FedAvg)")
	f.Var(unsetFloat(&o.beta1), "server-beta1", "--server-opt fedadam, fedyogi, fedadagrad: first moment decay β1 (default: 0.9; fedadagrad 0)")
	f.Var(unsetFloat(&o.beta2), "server-beta2", "--server-opt fedadam, fedyogi: second moment decay β2 (default 0.99)")
	f.Var(unsetFloat(&o.tau), "server-tau", "--server-opt fedadam, fedyogi, fedadagrad: adaptivity τ (default 1e-9)")
}

// opt is the optimizer the flags state: the rule's defaults, with the
// hyper-parameters given on the command line (or in the job file) in
// their place; the aggregator's configuration checks it.
func (o *serverOptFlags) opt() aggregator.ServerOpt {
	s := aggregator.DefaultServerOpt(o.rule)
	for _, p := range []struct {
		dst *float64
		v   *float64
	}{{&s.LR, o.lr}, {&s.Momentum, o.mom}, {&s.Beta1, o.beta1}, {&s.Beta2, o.beta2}, {&s.Tau, o.tau}} {
		if p.v != nil {
			*p.dst = *p.v
		}
	}
	return s
}

// recFlags are the aggregator's settings of a recommendation job.
type recFlags struct {
	phi, freeze int
	strict      bool
	lps         aggregator.LPSFedConfig // RefEvery and StrictStats
}

// registerReference adds the reference-graph and freezing flags (Φ is
// registered by each command: its help differs).
func (rf *recFlags) registerReference(f *pflag.FlagSet) {
	d := job.DefaultAggregatorSpec()
	f.IntVar(&rf.freeze, "freeze-rounds", d.FreezeRounds, "rec: first rounds in which nothing is distributed")
	f.IntVar(&rf.lps.RefEvery, "ref-every", d.LPSFed.RefEvery, "rec: rebuild the GNMK reference every N rounds (0: once)")
	f.BoolVar(&rf.strict, "strict", d.LPSFed.Strict, "rec: build the reference from the assumed counts below, clients send none")
	f.BoolVar(&rf.lps.Uniform, "no-personalization", false, "rec ablation (Table 4 \"w/o per\"): every client gets the plain mean of the MLPs and margin (ρ̄_c = 1)")
	f.IntVar(&rf.lps.StrictStats.Users, "strict-users", d.LPSFed.StrictStats.Users, "rec strict mode: assumed users per client")
	f.IntVar(&rf.lps.StrictStats.Items, "strict-items", d.LPSFed.StrictStats.Items, "rec strict mode: assumed items per client")
	f.IntVar(&rf.lps.StrictStats.Edges, "strict-edges", d.LPSFed.StrictStats.Edges, "rec strict mode: assumed interactions per client")
}

// config is the LPSFed strategy's configuration from the flags.
func (rf *recFlags) config(seed uint64) aggregator.LPSFedConfig {
	c := rf.lps
	c.Phi, c.Strict, c.Seed = rf.phi, rf.strict, seed
	return c
}

// contractFlags fix the job's contract on the aggregator's command line
// (job.AggregatorContract), and its robust aggregation rule.
type contractFlags struct {
	k      job.AggregatorContract
	robust robustFlags
	opt    serverOptFlags
}

func (c *contractFlags) register(f *pflag.FlagSet) {
	d := job.DefaultAggregatorSpec().Contract
	f.StringVar(&c.k.Schema, "schema", "", "the job's model schema HASH:PARAMS (`graphfed agent --print-schema` prints a bank's); a hello of another is refused and counted. Required with --keyring; without one, the first accepted hello's is adopted (logged)")
	f.Float64Var(&c.k.MaxTrainSize, "max-train-size", 0, "largest training size a bank may declare at its hello; an update's weight is capped at its bank's (0: 1e15)")
	f.Float64Var(&c.k.ModelClip, "model-clip", d.ModelClip, "the banks' --model-clip (the default is theirs): with --model-sigma and --grad-sigma it bounds every update's norm (0: no bound)")
	f.Float64Var(&c.k.ModelSigma, "model-sigma", d.ModelSigma, "the banks' --model-sigma (σ1), with --model-clip")
	f.Float64Var(&c.k.GradSigma, "grad-sigma", d.GradSigma, "the banks' --grad-sigma (σ2), with --model-clip")
	f.StringVar(&c.k.Grad, "grad", "", "whether updates carry a gradient estimator: none or shared (an update that disagrees is refused and counted). "+
		"Default: the task's learners decide: shared for node cefedgnn and fedgnn-st, none for every other job (aml's banks train with Adam, which shares none: give shared with the banks' --aml-opt cefed)")
	c.robust.register(f)
	c.opt.register(f)
}
