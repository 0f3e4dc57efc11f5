package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/job"
)

// newSplitCmd is `graphfed split`, the parent of the data splitters.
func newSplitCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "split", Short: "Cut a dataset into what each party holds"}
	cmd.AddCommand(newSplitAMLCmd(g), newSplitRecCmd(g))
	return cmd
}

// newSplitAMLCmd is `graphfed split aml`: one AMLworld directory per bank.
func newSplitAMLCmd(g *globalFlags) *cobra.Command {
	var spec job.SplitAMLSpec
	cmd := &cobra.Command{
		Use:   "aml --trans FILE --out DIR [--accounts FILE] [--patterns FILE]",
		Short: "Write DIR/bank-<id>/ per bank: the rows, accounts and patterns that bank sees, and the world's split",
		Long: `Cut an AMLworld world into DIR/bank-<id> per bank, in AMLworld format: the rows with an
endpoint among its accounts (other banks' accounts only as bank id and account number), its
accounts, the pattern rows it sees, and split.json, the temporal split every bank applies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := job.SplitAML(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("split aml: %w", err)
			}
			return g.emit(Report{Command: "split aml", Dataset: r.Dataset, Clients: r.Clients, Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Trans, "trans", "", "the world's <name>_Trans.csv (required)")
	f.StringVar(&spec.Out, "out", "", "output directory; bank-<id> directories are written in it (required)")
	f.StringVar(&spec.Accounts, "accounts", "", "the world's accounts file (default: <name>_accounts.csv beside --trans, if present)")
	f.StringVar(&spec.Patterns, "patterns", "", "the world's patterns file (default: <name>_Patterns.txt beside --trans, if present)")
	f.BoolVar(&spec.Lenient, "lenient", false, "skip malformed rows (counted in skipped_rows) instead of failing")
	_ = cmd.MarkFlagRequired("trans")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// newSplitRecCmd is `graphfed split rec`: one LightGCN directory per
// recommendation client.
func newSplitRecCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultSplitRecSpec()
	cmd := &cobra.Command{
		Use:   "rec --lightgcn DIR --clients N [--partition spectral|random] [--split random:0.8,0.1,0.1] [--partitionings K] --out DIR",
		Short: "Write DIR/client-<i>/ per client: its users' interactions in the LightGCN layout, local ids",
		Long: `Cut a LightGCN dataset into the clients of a federated recommendation job, as
graphfed sim --lightgcn does with the same --split, --split-seed, --partitioning, --partition-seed
(or --seed), --edge-variation and --max-users; DIR/client-<i> (with val.txt beside test.txt under
a validation share) is what graphfed agent --task rec --data reads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := job.SplitRec(cmd.Context(), spec)
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
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "partition seed (graphfed sim --lightgcn's --partition-seed, or its --seed, gives the same clients)")
	f.StringVar(&spec.Protocol.Split, "split", "", job.RecSplitHelp)
	f.IntVar(&spec.Partitionings, "partitionings", 0, "write partitionings 0..K-1, each under DIR/partitioning-<k>")
	registerRecProtocol(f, &spec.Protocol)
	cmd.MarkFlagRequired("lightgcn")
	cmd.MarkFlagRequired("out")
	return cmd
}
