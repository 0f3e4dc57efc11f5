package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/deploy"
	"graphfed/job"
)

// newTrainCmd is `graphfed train`: flags into job.TrainSpec, the
// centralized node baseline or with --aml the AML one.
func newTrainCmd(g *globalFlags) *cobra.Command {
	var (
		spec  = job.DefaultTrainSpec()
		csbm  csbmFlags
		multi multiGNNFlags
		lg    = &spec.LightGCN
	)
	cmd := &cobra.Command{
		Use:   "train (--dataset DIR | --scenario csbm | --aml FILE | --lightgcn DIR) [--model gcn|sage] [--kind gin|sage|gcn]",
		Short: "Centralized baseline: train one model on the whole graph",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.Node.CSBM, spec.Log, spec.Progress = csbm.cfg, g.logger(), cmdProgress{}
			spec.AML.Ports, spec.AML.TimeDeltas, spec.AML.EgoIDs, spec.AML.MultiGNN = multi.portsOn, multi.timeDeltasOn, multi.egoIDsOn, multi.all
			res, err := job.Train(cmd.Context(), spec)
			if res.Metrics == nil {
				return err
			}
			return errors.Join(g.emit(Report{Command: "train", Algo: res.Algo, Dataset: res.Dataset, Clients: 1, Seed: int64(spec.Seed),
				Metrics: res.Metrics}, start), err)
		},
	}
	n, a, p := job.NodeTrainHyper(), job.AMLTrainHyper(), &spec.Params
	f := cmd.Flags()
	f.StringVar(&spec.Node.Dataset, "dataset", "", "dataset directory in the TSV layout (e.g. examples/data/cora)")
	f.StringVar(&spec.Node.Scenario, "scenario", "", "generate a dataset instead: csbm")
	f.StringVar(&spec.Node.Model, "model", spec.Node.Model, "gcn or sage")
	f.IntVar(&p.Epochs, "epochs", 0, fmt.Sprintf("training epochs (default %d; --aml: %d; --lightgcn: 1000)", n.Epochs, a.Epochs))
	f.Float64Var(&p.LR, "lr", 0, fmt.Sprintf("Adam learning rate (default %v; --aml: %v; --lightgcn: 0.001)", n.LR, a.LR))
	f.Var(unsetFloat(&p.WeightDecay), "weight-decay", fmt.Sprintf("L2 weight decay on the first layer (default %v; --aml: %v)", n.WeightDecay, a.WeightDecay))
	f.IntVar(&p.Hidden, "hidden", 0, fmt.Sprintf("hidden units (default %d; --aml: %d)", n.Hidden, a.Hidden))
	f.Var(unsetFloat(&p.Dropout), "dropout", fmt.Sprintf("dropout probability (default %v; --aml: %v)", n.Dropout, a.Dropout))
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "random seed")
	csbm.register(cmd)
	s := &spec.AML
	f.StringVar(&s.Trans, "aml", "", "train the AML transaction classifier on an AMLworld *_Trans.csv file (generated or downloaded)")
	f.StringVar(&s.Kind, "kind", s.Kind, "AML: message passing, gin, sage or gcn")
	f.Var(unsetInt(&lg.Layers), "layers", fmt.Sprintf("AML: message-passing layers (default %d); LightGCN: propagation layers (default 3)", s.Layers))
	f.Var(unsetInt(&lg.Batch), "batch", fmt.Sprintf("AML: seed transactions per step (default %d); LightGCN: BPR triples per step (default 2048)", s.BatchSize))
	f.IntSliceVar(&s.FanOut, "fanout", s.FanOut, "AML: neighbours sampled per node and direction at each layer, nearest hop first (-1: all)")
	f.Float64Var(&s.PosFraction, "pos-fraction", s.PosFraction, "AML: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision, as the federated banks train (0: the default; negative: uniform batches with the class weights in the loss)")
	f.Var(unsetInt(&s.StepsPerEpoch), "steps-per-epoch", fmt.Sprintf("AML: training steps per epoch. Stratified batches: default %d, the local steps of one bank over a default federated job (%d rounds × %d), so --epochs E takes as many steps as E banks; uniform batches (--pos-fraction < 0): default 0, every training row once, else a fresh random subset of them",
		job.DefaultAMLTrainStepsPerEpoch, job.DefaultAMLRounds, deploy.DefaultAMLLocalSteps))
	f.Var(unsetInt(&spec.StepsAlias), "steps", "AML: old name of --steps-per-epoch")
	_ = f.MarkDeprecated("steps", "use --steps-per-epoch")
	f.IntVar(&s.EvalBatch, "eval-batch", s.EvalBatch, "AML: seed transactions per evaluation batch")
	f.IntVar(&s.ValSample, "val-sample", s.ValSample, "AML: the validation after every epoch (which picks the best epoch) scores every laundering validation transaction and at most this many legitimate ones, F1 weighed back to the split; the best epoch's model is then scored on all of them (≤ 0: all every epoch)")
	f.Float64Var(&s.ClassWeightCap, "class-weight-cap", s.ClassWeightCap, "AML: cap of the laundering class's inverse-frequency loss weight")
	f.BoolVar(&s.NoReverseMP, "no-reverse-mp", false, "AML: messages follow edges only (no separate outgoing aggregation)")
	f.BoolVar(&s.NoEdgeUpdates, "no-edge-updates", false, "AML: no edge-embedding updates between layers")
	multi.register(f, "AML: ", "")
	f.StringVar(&lg.Dir, "lightgcn", "", "train the centralized LightGCN recommender on a LightGCN-layout directory (train.txt, test.txt)")
	f.Var(unsetInt(&lg.Dim), "dim", "LightGCN: embedding dimension (default 64)")
	f.Var(unsetFloat(&lg.Reg), "reg", "LightGCN: L2 on the batch's layer-0 embeddings (default 1e-4)")
	f.StringVar(&lg.LRSchedule, "lr-schedule", "", "LightGCN: learning rate over the epochs: constant (the paper's, default), step (×--lr-decay after each of --lr-decay-epochs, the default when they are given) or cosine (annealed from --lr to --lr × --lr-decay over --epochs)")
	f.Var(unsetFloat(&lg.LRDecay), "lr-decay", "LightGCN: the step schedule's factor, in (0, 1), or the cosine schedule's final fraction of --lr, in [0, 1) (default 0.1)")
	f.IntSliceVar(&lg.LRDecayEpochs, "lr-decay-epochs", nil, "LightGCN: the step schedule's milestones: the rate is multiplied by --lr-decay after each of these epochs (e.g. 100,200)")
	f.Var(unsetInt(&lg.EvalEvery), "eval-every", "LightGCN: evaluate Recall/NDCG@20 every this many epochs and after the last (default 10)")
	return cmd
}
