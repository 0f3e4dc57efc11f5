package main

import (
	"time"

	"github.com/spf13/cobra"

	"graphfed/job"
)

// newPrivacyCmd is `graphfed privacy`: privacy arithmetic without a run.
func newPrivacyCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "privacy", Short: "Privacy accounting tools (ε of composed Gaussian releases)"}
	cmd.AddCommand(newPrivacyEpsilonCmd(g))
	return cmd
}

// newPrivacyEpsilonCmd is `graphfed privacy epsilon`: flags into job.EpsilonSpec.
func newPrivacyEpsilonCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultEpsilonSpec()
	cmd := &cobra.Command{
		Use:   "epsilon --sigma S --rho R --releases N --delta D [--accountant rdp|exact]",
		Short: "ε(δ) of N Gaussian releases with noise σ at distance ρ",
		Example: "  graphfed privacy epsilon --sigma 0.3 --rho 0.1466 --releases 200 --delta 1e-4\n" +
			"  (CE-FedGNN Table 6, 90th percentile: ε = 51.794)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := job.Epsilon(spec)
			if err != nil {
				return err
			}
			if err := r.WriteText(g.humanOut()); err != nil {
				return err
			}
			return g.emit(Report{Command: "privacy epsilon", Algo: r.Kind.String(), Metrics: r.Metrics(), Privacy: r.Privacy()}, start)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&spec.Sigma, "sigma", 0, "noise standard deviation per coordinate")
	f.Float64Var(&spec.Rho, "rho", 0, "metric distance (embeddings) or sensitivity (model channels: 2·clip·sqrt(rows))")
	f.IntVar(&spec.Releases, "releases", 0, "number of releases composed")
	f.Float64Var(&spec.Delta, "delta", spec.Delta, "δ")
	f.StringVar(&spec.Accountant, "accountant", spec.Accountant, "rdp (Opacus orders, as CE-FedGNN) or exact (composed Gaussian)")
	for _, name := range []string{"sigma", "rho", "releases"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}
