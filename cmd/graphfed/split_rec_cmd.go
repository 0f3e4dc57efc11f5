package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/graph"
	"graphfed/spectral"
	"graphfed/workload/rec"
)

// newSplitRecCmd is `graphfed split rec`: one LightGCN directory per
// recommendation client, for separate `graphfed agent --task rec`
// processes.
func newSplitRecCmd(g *globalFlags) *cobra.Command {
	var (
		dir, out string
		opt      rec.SplitOptions
	)
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
			d, err := graph.LoadLightGCN(dir)
			if err != nil {
				return fmt.Errorf("split rec: %w", err)
			}
			clients, st, err := rec.Split(d, opt)
			if err != nil {
				return fmt.Errorf("split rec: %w", err)
			}
			if err := rec.WriteClients(out, clients); err != nil {
				return fmt.Errorf("split rec: %w", err)
			}
			per := map[string]any{}
			for _, c := range clients {
				per[c.ID] = map[string]any{"users": c.Data.Users, "items": c.Data.Items, "train": c.Data.Train.NNZ(),
					"test": c.Data.Test.NNZ(), "test_dropped": c.TestDropped}
			}
			fmt.Fprintf(g.humanOut(), "wrote %d clients under %s\n", len(clients), out)
			return g.emit(Report{Command: "split rec", Dataset: d.Name, Clients: len(clients), Seed: int64(opt.Seed),
				Metrics: map[string]any{"per_client": per, "moved": st.Moved, "no_train_users": st.NoTrainUsers,
					"partition": opt.Partition, "out": out}}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "lightgcn", "", "dataset in the LightGCN layout (required)")
	f.StringVar(&out, "out", "", "output directory; client-<i> directories are written in it (required)")
	f.IntVar(&opt.Clients, "clients", 4, "clients")
	f.StringVar(&opt.Partition, "partition", rec.PartitionSpectral, "spectral (LPSFed's benchmark) or random")
	f.Float64Var(&opt.EdgeVariation, "edge-variation", spectral.DefaultEdgeVariation, "spectral partition: spread of interactions across clients")
	f.IntVar(&opt.MaxUsers, "max-users", 0, "keep only the first N users of the dataset (0: all)")
	f.Uint64Var(&opt.Seed, "seed", 1, "partition seed (graphfed sim --lightgcn's --seed gives the same clients)")
	cmd.MarkFlagRequired("lightgcn")
	cmd.MarkFlagRequired("out")
	return cmd
}
