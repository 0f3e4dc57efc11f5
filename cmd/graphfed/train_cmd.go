package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/spf13/cobra"

	"graphfed/gnn"
	"graphfed/graph"
	joblib "graphfed/job"
)

func newTrainCmd(g *globalFlags) *cobra.Command {
	var (
		dir, scenario string
		seed          uint64
		csbm          csbmFlags
	)
	var aml amlTrainFlags
	cfg := gnn.DefaultTrainConfig()
	cmd := &cobra.Command{
		Use:   "train (--dataset DIR | --scenario csbm | --aml FILE) [--model gcn|sage] [--kind gin|sage|gcn]",
		Short: "Centralized baseline: train one model on the whole graph",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if aml.path != "" {
				if dir != "" || scenario != "" {
					return fmt.Errorf("train: --aml excludes --dataset and --scenario")
				}
				return aml.run(cmd, g, cfg, seed)
			}
			start := time.Now()
			d, name, err := joblib.LoadNodeDataset(dir, scenario, csbm.cfg, seed)
			if err != nil {
				return fmt.Errorf("train: %w", err)
			}
			cfg.EvalEvery = max(cfg.Epochs/10, 1)
			cfg.RowNormalize = graph.NonNegative(d.Features)
			p := newProgress("train "+cfg.Model, cfg.Epochs)
			cfg.OnEpoch = func(e gnn.EpochStats) {
				if e.Val.Count > 0 {
					p.update(e.Epoch, fmt.Sprintf("loss %.4f val_acc %.4f", e.Loss, e.Val.Acc))
				}
			}
			h, err := gnn.TrainCentralized(d, cfg, rand.New(rand.NewPCG(seed, 0x7a1)))
			p.finish()
			if err != nil {
				return fmt.Errorf("train: %w", err)
			}
			return g.emit(Report{
				Command: "train", Algo: "centralized-" + cfg.Model, Dataset: name, Clients: 1, Seed: int64(seed),
				Metrics: map[string]any{
					"test_acc": h.Test.Acc, "test_macro_f1": h.Test.MacroF1, "val_acc": h.Val.Acc,
					"train_acc": h.Train.Acc, "epochs": cfg.Epochs, "final_loss": h.Epochs[len(h.Epochs)-1].Loss,
				},
			}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dataset", "", "dataset directory in the TSV layout (e.g. examples/data/cora)")
	f.StringVar(&scenario, "scenario", "", "generate a dataset instead: csbm")
	f.StringVar(&cfg.Model, "model", cfg.Model, "gcn or sage")
	f.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "training epochs")
	f.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam learning rate")
	f.Float64Var(&cfg.WeightDecay, "weight-decay", cfg.WeightDecay, "L2 weight decay on the first layer")
	f.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "hidden units")
	f.Float64Var(&cfg.Dropout, "dropout", cfg.Dropout, "dropout probability")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	csbm.register(cmd)
	aml.register(cmd)
	return cmd
}
