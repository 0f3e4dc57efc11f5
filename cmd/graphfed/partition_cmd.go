package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

func newPartitionCmd(g *globalFlags) *cobra.Command {
	spec := joblib.DefaultPartitionSpec()
	var csbm csbmFlags
	cmd := &cobra.Command{
		Use:   "partition (--dataset DIR | --scenario csbm) --clients N --partition louvain|random|metis|metis-overlap [--split random:0.2,0.4,0.4] --out DIR",
		Short: "Split a dataset into per-client TSV directories for separate agent processes",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.CSBM = csbm.cfg
			r, err := joblib.Partition(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("partition: %w", err)
			}
			fmt.Fprintf(g.humanOut(), "wrote %d clients under %s (nodes %d..%d, cross-edge share %.3f)\n",
				r.Clients, spec.Out, r.Stats.MinNodes, r.Stats.MaxNodes, r.Stats.CrossShare)
			return g.emit(Report{Command: "partition", Dataset: r.Dataset, Clients: r.Clients, Seed: int64(spec.Seed), Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Dataset, "dataset", "", "dataset directory in the TSV layout")
	f.StringVar(&spec.Scenario, "scenario", "", "generate instead: csbm")
	f.StringVar(&spec.Method, "partition", spec.Method, joblib.PartitionMethods)
	f.StringVar(&spec.Split, "split", spec.Split, joblib.SplitHelp)
	f.IntVar(&spec.Clients, "clients", spec.Clients, "number of clients")
	f.StringVar(&spec.Out, "out", "", "output directory (one sub-directory per client)")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "seed")
	csbm.register(cmd)
	cmd.MarkFlagRequired("out")
	return cmd
}
