package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"graphfed/deploy"
	"graphfed/privacy"
)

// newPrivacyCmd is `graphfed privacy`: privacy arithmetic without a run.
func newPrivacyCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "privacy",
		Short: "Privacy accounting tools (ε of composed Gaussian releases)",
	}
	cmd.AddCommand(newPrivacyEpsilonCmd(g))
	return cmd
}

// newPrivacyEpsilonCmd is `graphfed privacy epsilon`: flags into
// privacy.EpsilonForSigma, one cell of CE-FedGNN Table 6.
func newPrivacyEpsilonCmd(g *globalFlags) *cobra.Command {
	var (
		sigma, rho, delta float64
		releases          int
		accountant        string
	)
	cmd := &cobra.Command{
		Use:   "epsilon --sigma S --rho R --releases N --delta D [--accountant rdp|exact]",
		Short: "ε(δ) of N Gaussian releases with noise σ at distance ρ",
		Example: "  graphfed privacy epsilon --sigma 0.3 --rho 0.1466 --releases 200 --delta 1e-4\n" +
			"  (CE-FedGNN Table 6, 90th percentile: ε = 51.794)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			kind, err := privacy.ParseAccountantKind(accountant)
			if err != nil {
				return err
			}
			c, err := privacy.EpsilonForSigma(sigma, delta, rho, releases, kind)
			if err != nil {
				return fmt.Errorf("privacy epsilon: %w", err)
			}
			metrics := map[string]any{"epsilon": c.Epsilon, "mu": c.Mu, "releases": releases, "sigma": sigma, "rho": rho}
			if kind == privacy.RDP {
				metrics["rdp_order"] = c.RDPOrder
			}
			fmt.Fprintf(g.humanOut(), "%s accountant: %d releases, σ=%g, ρ=%g (μ=%.6g): ε=%.6f at δ=%g\n",
				kind, releases, sigma, rho, c.Mu, c.Epsilon, delta)
			return g.emit(Report{
				Command: "privacy epsilon", Algo: kind.String(), Metrics: metrics,
				Privacy: map[string]any{"delta": delta, "epsilon": c.Epsilon, "accountant": kind.String()},
			}, start)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&sigma, "sigma", 0, "noise standard deviation per coordinate")
	f.Float64Var(&rho, "rho", 0, "metric distance (embeddings) or sensitivity (model channels: 2·clip·sqrt(rows))")
	f.IntVar(&releases, "releases", 0, "number of releases composed")
	f.Float64Var(&delta, "delta", deploy.DefaultDelta, "δ")
	f.StringVar(&accountant, "accountant", privacy.RDP.String(), "rdp (Opacus orders, as CE-FedGNN) or exact (composed Gaussian)")
	for _, name := range []string{"sigma", "rho", "releases"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}
