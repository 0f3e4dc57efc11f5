package main

import (
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"graphfed/aggregator"
	"graphfed/deploy"
)

// contractFlags fix the job's contract on the aggregator's command line
// (aggregator.Contract): the model schema before any hello, the largest
// training size a bank may declare, and the clip and noise of the banks'
// gates, which bound every update's norm.
type contractFlags struct {
	schema                           string
	maxTrain                         float64
	modelClip, modelSigma, gradSigma float64
	grad                             string
	robust                           robustFlags
}

func (c *contractFlags) register(f *pflag.FlagSet) {
	f.StringVar(&c.schema, "schema", "", "the job's model schema HASH:PARAMS (an agent's hello states it); a hello of another is refused and counted. Empty: the first accepted hello's is adopted (logged)")
	f.Float64Var(&c.maxTrain, "max-train-size", 0, "largest training size a bank may declare at its hello; an update's weight is capped at its bank's (0: 1e15)")
	f.Float64Var(&c.modelClip, "model-clip", 0, "the banks' --model-clip: with --model-sigma and --grad-sigma it bounds every update's norm (0: no bound)")
	f.Float64Var(&c.modelSigma, "model-sigma", 0, "the banks' --model-sigma (σ1), with --model-clip")
	f.Float64Var(&c.gradSigma, "grad-sigma", 0, "the banks' --grad-sigma (σ2), with --model-clip")
	f.StringVar(&c.grad, "grad", "", "whether updates carry a gradient estimator: none or shared (an update that disagrees is refused and counted). "+
		"Default: the task's learners decide: shared for node cefedgnn and fedgnn-st, none for every other job (aml's banks train with Adam, which shares none: give shared with the banks' --aml-opt cefed)")
	c.robust.register(f)
}

// robustRule is the aggregation rule the flags state.
func (c *contractFlags) robustRule() aggregator.Robust {
	return c.robust.robust()
}

// contract is the contract the flags state for a job of task under algo;
// what they leave open is logged.
func (c *contractFlags) contract(log zerolog.Logger, task, algo string) (aggregator.Contract, error) {
	k := aggregator.Contract{MaxTrainSize: c.maxTrain, Clip: c.modelClip, Sigma: c.modelSigma, GradSigma: c.gradSigma,
		Grad: deploy.GradPolicy(task, algo, c.grad)}
	if c.schema != "" {
		var err error
		if k.SchemaHash, k.NumParams, err = aggregator.ParseSchema(c.schema); err != nil {
			return aggregator.Contract{}, err
		}
	} else {
		log.Warn().Msg("no --schema: the first accepted hello sets the job's model schema (restrict who may say hello with --clients or --keyring)")
	}
	if c.modelClip == 0 {
		log.Warn().Msg("no --model-clip: the norms of the banks' updates are not bounded")
	}
	return k, nil
}
