package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"graphfed/deploy"
	joblib "graphfed/job"
)

// amlTrainFlags are the flags of `graphfed train --aml FILE`, the
// centralized baseline of the AML job, bound into job.TrainAMLSpec.
type amlTrainFlags struct {
	spec  joblib.TrainAMLSpec
	steps *int // --steps, the deprecated name of --steps-per-epoch
	multi multiGNNFlags
}

func (a *amlTrainFlags) register(cmd *cobra.Command) {
	a.spec = joblib.DefaultTrainAMLSpec()
	s := &a.spec
	f := cmd.Flags()
	f.StringVar(&s.Trans, "aml", "", "train the AML transaction classifier on an AMLworld *_Trans.csv file (generated or downloaded)")
	f.StringVar(&s.Kind, "kind", s.Kind, "AML: message passing, gin, sage or gcn")
	f.IntVar(&s.Layers, "layers", s.Layers, "AML: message-passing layers")
	f.IntVar(&s.BatchSize, "batch", s.BatchSize, "AML: seed transactions per step")
	f.IntSliceVar(&s.FanOut, "fanout", s.FanOut, "AML: neighbours sampled per node and direction at each layer, nearest hop first (-1: all)")
	f.Float64Var(&s.PosFraction, "pos-fraction", s.PosFraction, "AML: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision, as the federated banks train (0: the default; negative: uniform batches with the class weights in the loss)")
	f.Var(unsetInt(&s.StepsPerEpoch), "steps-per-epoch", fmt.Sprintf("AML: training steps per epoch. Stratified batches: default %d, the local steps of one bank over a default federated job (%d rounds × %d), so --epochs E takes as many steps as E banks; uniform batches (--pos-fraction < 0): default 0, every training row once, else a fresh random subset of them",
		joblib.DefaultAMLTrainStepsPerEpoch, joblib.DefaultAMLRounds, deploy.DefaultAMLLocalSteps))
	f.Var(unsetInt(&a.steps), "steps", "AML: old name of --steps-per-epoch")
	_ = f.MarkDeprecated("steps", "use --steps-per-epoch")
	f.IntVar(&s.EvalBatch, "eval-batch", s.EvalBatch, "AML: seed transactions per evaluation batch")
	f.IntVar(&s.ValSample, "val-sample", s.ValSample, "AML: the validation after every epoch (which picks the best epoch) scores every laundering validation transaction and at most this many legitimate ones, F1 weighed back to the split; the best epoch's model is then scored on all of them (≤ 0: all every epoch)")
	f.Float64Var(&s.ClassWeightCap, "class-weight-cap", s.ClassWeightCap, "AML: cap of the laundering class's inverse-frequency loss weight")
	f.BoolVar(&s.NoReverseMP, "no-reverse-mp", false, "AML: messages follow edges only (no separate outgoing aggregation)")
	f.BoolVar(&s.NoEdgeUpdates, "no-edge-updates", false, "AML: no edge-embedding updates between layers")
	a.multi.register(f, "AML: ", "")
}

// specFor is the spec the flags give, with the shared parameters.
func (a *amlTrainFlags) specFor(g *globalFlags, params joblib.TrainParams, seed uint64) (joblib.TrainAMLSpec, error) {
	s := a.spec
	if a.steps != nil {
		if s.StepsPerEpoch != nil {
			return s, errors.New("--steps is the old name of --steps-per-epoch: give one")
		}
		s.StepsPerEpoch = a.steps
	}
	s.Params, s.Seed, s.Log, s.Progress = params, seed, g.logger(), cmdProgress{}
	s.Ports, s.TimeDeltas, s.EgoIDs, s.MultiGNN = a.multi.portsOn, a.multi.timeDeltasOn, a.multi.egoIDsOn, a.multi.all
	return s, nil
}

// run trains the AML baseline.
func (a *amlTrainFlags) run(cmd *cobra.Command, g *globalFlags, params joblib.TrainParams, seed uint64) (joblib.TrainResult, error) {
	s, err := a.specFor(g, params, seed)
	if err != nil {
		return joblib.TrainResult{}, fmt.Errorf("train --aml: %w", err)
	}
	res, err := joblib.TrainAML(cmd.Context(), s)
	if err != nil {
		return res, fmt.Errorf("train --aml: %w", err)
	}
	return res, nil
}
