package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

// newSplitRecCmd is `graphfed split rec`: one LightGCN directory per
// recommendation client, for separate `graphfed agent --task rec`
// processes.
func newSplitRecCmd(g *globalFlags) *cobra.Command {
	spec := joblib.DefaultSplitRecSpec()
	cmd := &cobra.Command{
		Use:   "rec --lightgcn DIR --clients N [--partition spectral|random] --out DIR",
		Short: "Write DIR/client-<i>/ per client: its users' interactions in the LightGCN layout, local ids",
		Long: `Cut a LightGCN dataset (train.txt, test.txt) into the clients of a federated
recommendation job, as graphfed sim --lightgcn does: users are split by spectral
clustering of the training graph (or at random), each client keeps its users, the
items they trained on (renumbered in global order) and their held-out
interactions on those items. Each client's directory is what its agent reads
with graphfed agent --task rec --data DIR/client-<i>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := joblib.SplitRec(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("split rec: %w", err)
			}
			fmt.Fprintf(g.humanOut(), "wrote %d clients under %s\n", r.Clients, spec.Out)
			return g.emit(Report{Command: "split rec", Dataset: r.Dataset, Clients: r.Clients, Seed: int64(spec.Seed), Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.LightGCN, "lightgcn", "", "dataset in the LightGCN layout (required)")
	f.StringVar(&spec.Out, "out", "", "output directory; client-<i> directories are written in it (required)")
	f.IntVar(&spec.Clients, "clients", spec.Clients, "clients")
	f.StringVar(&spec.Partition, "partition", spec.Partition, "spectral (LPSFed's benchmark) or random")
	f.Float64Var(&spec.EdgeVariation, "edge-variation", spec.EdgeVariation, "spectral partition: spread of interactions across clients")
	f.IntVar(&spec.MaxUsers, "max-users", 0, "keep only the first N users of the dataset (0: all)")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "partition seed (graphfed sim --lightgcn's --seed gives the same clients)")
	cmd.MarkFlagRequired("lightgcn")
	cmd.MarkFlagRequired("out")
	return cmd
}
