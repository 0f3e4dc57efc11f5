package main

import (
	"github.com/spf13/pflag"

	"graphfed/job"
)

// contractFlags fix the job's contract on the aggregator's command line
// (job.AggregatorContract), and its robust aggregation rule.
type contractFlags struct {
	k      job.AggregatorContract
	robust robustFlags
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
}
