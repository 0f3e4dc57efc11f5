package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aml/amlworld"
	"graphfed/aml/worldgen"
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

// newGenAMLCmd is `graphfed gen aml`: an AMLworld-format world of B banks.
func newGenAMLCmd(g *globalFlags) *cobra.Command {
	var (
		banks                           int
		size, ratio                     string
		out, prefix                     string
		seed                            uint64
		illicit, crossHops, recruitPool float64
	)
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
			sz, err := worldgen.ParseSize(size)
			if err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			rt, err := worldgen.ParseRatio(ratio)
			if err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			cfg, err := worldgen.Preset(sz, rt, seed)
			if err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			cfg.Banks = banks
			if prefix != "" {
				cfg.Prefix = prefix
			}
			if cmd.Flags().Changed("illicit-ratio") {
				cfg.IllicitRatio = illicit
			}
			if cmd.Flags().Changed("cross-bank-hop") {
				cfg.CrossBankHop = crossHops
			}
			if cmd.Flags().Changed("recruit-pool") {
				cfg.RecruitPool = recruitPool
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			p := newProgress("gen aml "+cfg.Prefix, int(cfg.Transactions))
			s, err := worldgen.Generate(cfg, out, func(done, total int64) {
				p.update(int(done), "rows")
			})
			p.finish()
			if err != nil {
				return fmt.Errorf("gen aml: %w", err)
			}
			typ := map[string]int64{}
			att := map[string]int{}
			for t := range s.RowsPerTypology {
				typ[amlworld.Typology(t).String()] = s.RowsPerTypology[t]
				att[amlworld.Typology(t).String()] = s.AttemptsPerTypology[t]
			}
			lo, hi := s.BankEdges[0], s.BankEdges[0]
			bankEdges := map[string]int64{}
			for b, n := range s.BankEdges {
				lo, hi = min(lo, n), max(hi, n)
				bankEdges[s.BankIDs[b]] = n
			}
			return g.emit(Report{
				Command: "gen aml", Dataset: cfg.Prefix, Clients: cfg.Banks, Seed: int64(seed),
				Metrics: map[string]any{
					"rows":                         s.Rows,
					"accounts":                     s.Accounts,
					"entities":                     s.Entities,
					"banks":                        s.Banks,
					"bank_ids":                     s.BankIDs,
					"bank_edges":                   bankEdges,
					"bank_edge_ratio":              ratio64(hi, lo),
					"laundering_rows":              s.LaunderingRows,
					"laundering_rate":              ratio64(s.LaunderingRows, s.Rows),
					"pattern_rows":                 s.PatternRows,
					"attempts":                     s.Attempts,
					"attempts_per_typology":        att,
					"rows_per_typology":            typ,
					"self_transfer_share":          ratio64(s.SelfTransfers, s.Rows),
					"cross_bank_share":             ratio64(s.CrossBankRows, s.Rows),
					"laundering_cross_bank_share":  ratio64(s.LaunderingCrossBankRows, s.LaunderingRows),
					"pattern_hop_cross_bank_share": ratio64(s.PatternCrossBankRows, s.PatternRows),
					"trans_file":                   s.TransPath,
					"patterns_file":                s.PatternsPath,
					"accounts_file":                s.AccountsPath,
				},
			}, start)
		},
	}
	f := cmd.Flags()
	f.IntVar(&banks, "banks", 8, "number of banks B (2..1000)")
	f.StringVar(&size, "size", "tiny", "tiny (10k accounts, 100k rows), small (500k, 5M) or medium (2M, 30M)")
	f.StringVar(&ratio, "ratio", "hi", "illicit ratio: hi (1 laundering row in 900) or li (1 in 1,900)")
	f.Uint64Var(&seed, "seed", 1, "random seed; the same flags and seed give the same files")
	f.StringVar(&out, "out", ".", "output directory (created if missing)")
	f.StringVar(&prefix, "prefix", "", "file prefix (default from size and ratio, e.g. HI-Small)")
	f.Float64Var(&illicit, "illicit-ratio", 0, "override the share of laundering rows (e.g. 0.01)")
	f.Float64Var(&crossHops, "cross-bank-hop", 0, "override the probability that a laundering hop changes bank (default 0.75)")
	f.Float64Var(&recruitPool, "recruit-pool", 0, "override the probability that an account a laundering hop recruits is a repeat launderer rather than a one-off mule (default 0.7)")
	return cmd
}

// ratio64 is a/b, 0 when b is 0.
func ratio64(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
