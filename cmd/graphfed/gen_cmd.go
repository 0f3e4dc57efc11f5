package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/job"
)

// newGenCmd is `graphfed gen`, the parent of the dataset generators.
func newGenCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "gen", Short: "Generate synthetic datasets"}
	cmd.AddCommand(newGenAMLCmd(g), newGenRecCmd(g))
	return cmd
}

// newGenAMLCmd is `graphfed gen aml`: flags into job.GenAMLSpec.
func newGenAMLCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultGenAMLSpec()
	cmd := &cobra.Command{
		Use:   "aml --banks B --size tiny|small|medium --ratio hi|li --seed S --out DIR",
		Short: "Generate an AML world: <Prefix>_Trans.csv, _Patterns.txt and _accounts.csv",
		Long: `Generate a synthetic AML world in the AMLworld format: B banks, payments and laundering
attempts of the 8 AMLworld typologies across banks, determined by the flags and seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.Progress = cmdProgress{}
			r, err := job.GenAML(cmd.Context(), spec)
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

// newGenRecCmd is `graphfed gen rec`: flags into job.GenRecSpec.
func newGenRecCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultGenRecSpec()
	cfg := &spec.Config
	cmd := &cobra.Command{
		Use:   "rec --users N --items M --seed S --out DIR [--user-tail a] [--item-zipf s] [--shapes LIST]",
		Short: "Generate a user–item recommendation dataset in the LightGCN layout (train.txt, test.txt)",
		Long: `Generate a synthetic implicit-feedback dataset in the LightGCN layout: Pareto user degrees,
Zipf item popularity, --test-fraction of each user's items held out. --shapes adds the spectral
solver's property-test structures, each with nodes of its own: dup=N, stars=N:LEAVES,
detached-stars=N, hubs=N:LEAVES, detached-hubs=N, pendants=N:CHAIN, components=N:UxI,
isolated-users=N, isolated-items=N (a shape without a value takes its default, "all" adds
every one; docs/JOBS.md). Output is determined by the flags and the seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := job.GenRec(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("gen rec: %w", err)
			}
			return g.emit(Report{Command: "gen rec", Dataset: r.Dataset, Seed: int64(cfg.Seed), Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Users, "users", cfg.Users, "users of the base graph")
	f.IntVar(&cfg.Items, "items", cfg.Items, "items of the base graph")
	f.Float64Var(&cfg.UserTail, "user-tail", cfg.UserTail, "Pareto tail index of user degrees (smaller: heavier tail)")
	f.IntVar(&cfg.MinDegree, "min-degree", cfg.MinDegree, "smallest user degree of the base graph")
	f.IntVar(&cfg.MaxDegree, "max-degree", 0, "largest user degree (0: items/2)")
	f.Float64Var(&cfg.ItemZipf, "item-zipf", cfg.ItemZipf, "Zipf exponent of item popularity (0: uniform)")
	f.Float64Var(&cfg.TestFraction, "test-fraction", cfg.TestFraction, "share of each user's items held out as test interactions")
	f.StringVar(&spec.Shapes, "shapes", "", "pathological shapes to add, e.g. dup=30,stars=4:200,pendants=10:5 or all (see --help)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same flags and seed give the same files")
	f.StringVar(&spec.Out, "out", "", "output directory (created if missing); its name is the dataset's")
	return cmd
}
