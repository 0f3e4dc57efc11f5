package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

// newSplitCmd is `graphfed split`, the parent of the per-party data
// splitters.
func newSplitCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "split",
		Short: "Cut a dataset into what each party holds",
	}
	cmd.AddCommand(newSplitAMLCmd(g), newSplitRecCmd(g))
	return cmd
}

// newSplitAMLCmd is `graphfed split aml`: one AMLworld directory per bank.
func newSplitAMLCmd(g *globalFlags) *cobra.Command {
	var spec joblib.SplitAMLSpec
	cmd := &cobra.Command{
		Use:   "aml --trans FILE --out DIR [--accounts FILE] [--patterns FILE]",
		Short: "Write DIR/bank-<id>/ per bank: the rows, accounts and patterns that bank sees, and the world's split",
		Long: `Cut an AMLworld world into one directory per bank, DIR/bank-<id> (bank ids
keep their leading zeros). Each holds what that bank sees, in AMLworld format:
<name>_Trans.csv with every row that has an endpoint among its accounts (rows
copied as written, in file order; other banks' accounts appear only as bank
id and account number), <name>_accounts.csv with its own accounts and
<name>_Patterns.txt with the rows it sees of each laundering attempt, when
the world has those files (by default the siblings of --trans), and
split.json with the world's temporal split, which every bank applies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := joblib.SplitAML(cmd.Context(), spec)
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
