package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

// newTrainCmd is `graphfed train`: flags into job.TrainNodeSpec, or with
// --aml into job.TrainAMLSpec (train_aml.go).
func newTrainCmd(g *globalFlags) *cobra.Command {
	var (
		node   = joblib.TrainNodeSpec{Model: joblib.DefaultNodeModel}
		aml    amlTrainFlags
		params joblib.TrainParams
		seed   uint64
		csbm   csbmFlags
	)
	cmd := &cobra.Command{
		Use:   "train (--dataset DIR | --scenario csbm | --aml FILE) [--model gcn|sage] [--kind gin|sage|gcn]",
		Short: "Centralized baseline: train one model on the whole graph",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			var (
				res joblib.TrainResult
				err error
			)
			if aml.spec.Trans != "" {
				if node.Dataset != "" || node.Scenario != "" {
					return fmt.Errorf("train: --aml excludes --dataset and --scenario")
				}
				res, err = aml.run(cmd, g, params, seed)
			} else {
				node.CSBM, node.Params, node.Seed, node.Progress = csbm.cfg, params, seed, cmdProgress{}
				if res, err = joblib.TrainNode(cmd.Context(), node); err != nil {
					err = fmt.Errorf("train: %w", err)
				}
			}
			if err != nil {
				return err
			}
			return g.emit(Report{Command: "train", Algo: res.Algo, Dataset: res.Dataset, Clients: 1, Seed: int64(seed),
				Metrics: res.Metrics}, start)
		},
	}
	n, a := joblib.NodeTrainHyper(), joblib.AMLTrainHyper()
	f := cmd.Flags()
	f.StringVar(&node.Dataset, "dataset", "", "dataset directory in the TSV layout (e.g. examples/data/cora)")
	f.StringVar(&node.Scenario, "scenario", "", "generate a dataset instead: csbm")
	f.StringVar(&node.Model, "model", node.Model, "gcn or sage")
	f.IntVar(&params.Epochs, "epochs", 0, fmt.Sprintf("training epochs (default %d; --aml: %d)", n.Epochs, a.Epochs))
	f.Float64Var(&params.LR, "lr", 0, fmt.Sprintf("Adam learning rate (default %v; --aml: %v)", n.LR, a.LR))
	f.Var(unsetFloat(&params.WeightDecay), "weight-decay", fmt.Sprintf("L2 weight decay on the first layer (default %v; --aml: %v)", n.WeightDecay, a.WeightDecay))
	f.IntVar(&params.Hidden, "hidden", 0, fmt.Sprintf("hidden units (default %d; --aml: %d)", n.Hidden, a.Hidden))
	f.Var(unsetFloat(&params.Dropout), "dropout", fmt.Sprintf("dropout probability (default %v; --aml: %v)", n.Dropout, a.Dropout))
	f.Uint64Var(&seed, "seed", 1, "random seed")
	csbm.register(cmd)
	aml.register(cmd)
	return cmd
}
