package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"graphfed/deploy"
	"graphfed/graph"
	joblib "graphfed/job"
)

func newPartitionCmd(g *globalFlags) *cobra.Command {
	var (
		dir, scenario, method, out, split string
		clients                           int
		seed                              uint64
		csbm                              csbmFlags
	)
	cmd := &cobra.Command{
		Use:   "partition (--dataset DIR | --scenario csbm) --clients N --partition louvain|random|metis|metis-overlap [--split random:0.2,0.4,0.4] --out DIR",
		Short: "Split a dataset into per-client TSV directories for separate agent processes",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			d, name, err := joblib.LoadNodeDataset(dir, scenario, csbm.cfg, seed)
			if err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			if d, err = joblib.ResplitDataset(d, split, seed); err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			cgs, err := joblib.PartitionDataset(d, clients, method, seed)
			if err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			for i, cg := range cgs {
				// The dataset stays in the name: a FedGSP agent picks its preset by it.
				cg.Data.Name = name + "/" + deploy.ClientID(i)
				if err := graph.WriteTSV(filepath.Join(out, deploy.ClientID(i)), cg.Data); err != nil {
					return fmt.Errorf("partition: %w", err)
				}
			}
			ps := graph.PartitionStats(cgs)
			fmt.Fprintf(g.humanOut(), "wrote %d clients under %s (nodes %d..%d, cross-edge share %.3f)\n", clients, out, ps.MinNodes, ps.MaxNodes, ps.CrossShare)
			return g.emit(Report{Command: "partition", Dataset: name, Clients: clients, Seed: int64(seed),
				Metrics: map[string]any{"min_nodes": ps.MinNodes, "max_nodes": ps.MaxNodes, "cross_share": ps.CrossShare, "out": out}}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dataset", "", "dataset directory in the TSV layout")
	f.StringVar(&scenario, "scenario", "", "generate instead: csbm")
	f.StringVar(&method, "partition", "louvain", joblib.PartitionMethods)
	f.StringVar(&split, "split", "public", joblib.SplitHelp)
	f.IntVar(&clients, "clients", 3, "number of clients")
	f.StringVar(&out, "out", "", "output directory (one sub-directory per client)")
	f.Uint64Var(&seed, "seed", 1, "seed")
	csbm.register(cmd)
	cmd.MarkFlagRequired("out")
	return cmd
}
