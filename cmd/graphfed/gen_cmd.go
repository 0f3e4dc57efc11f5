package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

// newGenCmd is `graphfed gen`, the parent of the dataset generators.
func newGenCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate synthetic datasets",
	}
	cmd.AddCommand(newGenAMLCmd(g), newGenRecCmd(g))
	return cmd
}

// newGenAMLCmd is `graphfed gen aml`: flags into job.GenAMLSpec.
func newGenAMLCmd(g *globalFlags) *cobra.Command {
	spec := joblib.DefaultGenAMLSpec()
	cmd := &cobra.Command{
		Use:   "aml --banks B --size tiny|small|medium --ratio hi|li --seed S --out DIR",
		Short: "Generate an AML world: <Prefix>_Trans.csv, _Patterns.txt and _accounts.csv",
		Long: `Generate a synthetic anti-money-laundering world in the published AMLworld
format: B banks of different sizes, normal payments and laundering attempts
of the 8 AMLworld typologies whose hops cross banks. The files are named
after the size and ratio (HI-Small_Trans.csv ...) unless --prefix is given.
Output is determined by the flags, the seed included.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.Progress = cmdProgress{}
			r, err := joblib.GenAML(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			return g.emit(Report{Command: "gen aml", Dataset: r.Dataset, Clients: r.Clients, Seed: int64(spec.Seed), Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.IntVar(&spec.Banks, "banks", spec.Banks, "number of banks B (2..1000)")
	f.StringVar(&spec.Size, "size", spec.Size, "tiny (10k accounts, 100k rows), small (500k, 5M) or medium (2M, 30M)")
	f.StringVar(&spec.Ratio, "ratio", spec.Ratio, "illicit ratio: hi (1 laundering row in 900) or li (1 in 1,900)")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "random seed; the same flags and seed give the same files")
	f.StringVar(&spec.Out, "out", spec.Out, "output directory (created if missing)")
	f.StringVar(&spec.Prefix, "prefix", "", "file prefix (default from size and ratio, e.g. HI-Small)")
	f.Var(unsetFloat(&spec.IllicitRatio), "illicit-ratio", "override the share of laundering rows (e.g. 0.01)")
	f.Var(unsetFloat(&spec.CrossBankHop), "cross-bank-hop", "override the probability that a laundering hop changes bank (default 0.75)")
	f.Var(unsetFloat(&spec.RecruitPool), "recruit-pool", "override the probability that an account a laundering hop recruits is a repeat launderer rather than a one-off mule (default 0.7)")
	return cmd
}
