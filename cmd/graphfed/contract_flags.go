package main

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"graphfed/agent"
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
	f.StringVar(&c.schema, "schema", "", "the job's model schema HASH:PARAMS (`graphfed agent --print-schema` prints a bank's); a hello of another is refused and counted. Required with --keyring; without one, the first accepted hello's is adopted (logged)")
	f.Float64Var(&c.maxTrain, "max-train-size", 0, "largest training size a bank may declare at its hello; an update's weight is capped at its bank's (0: 1e15)")
	f.Float64Var(&c.modelClip, "model-clip", agent.DefaultModelClip, "the banks' --model-clip (the default is theirs): with --model-sigma and --grad-sigma it bounds every update's norm (0: no bound)")
	f.Float64Var(&c.modelSigma, "model-sigma", agent.DefaultModelSigma, "the banks' --model-sigma (σ1), with --model-clip")
	f.Float64Var(&c.gradSigma, "grad-sigma", agent.DefaultGradSigma, "the banks' --grad-sigma (σ2), with --model-clip")
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
func (c *contractFlags) contract(log zerolog.Logger, task, algo string, keyring bool) (aggregator.Contract, error) {
	k := aggregator.Contract{MaxTrainSize: c.maxTrain, Clip: c.modelClip, Sigma: c.modelSigma, GradSigma: c.gradSigma,
		Grad: deploy.GradPolicy(task, algo, c.grad)}
	if c.schema != "" {
		var err error
		if k.SchemaHash, k.NumParams, err = aggregator.ParseSchema(c.schema); err != nil {
			return aggregator.Contract{}, err
		}
	} else if keyring {
		// A job whose parties hold keys fixes its schema up front: one
		// bank's key was enough to set it with the first hello (evil/1),
		// refusing every honest bank for good.
		return aggregator.Contract{}, fmt.Errorf("a job on a keyring fixes its model schema before any hello: give --schema HASH:PARAMS " +
			"(`graphfed agent --print-schema --job ID --task TASK --data DIR` prints a bank's; every bank's must agree)")
	} else {
		log.Warn().Msg("no --schema: the first accepted hello sets the job's model schema (restrict who may say hello with --clients or --keyring)")
	}
	if c.modelClip == 0 {
		log.Warn().Msg("no --model-clip: the norms of the banks' updates are not bounded")
	}
	return k, nil
}
