package job

import (
	"fmt"
	"math"
	"strings"

	"graphfed/agent"
	"graphfed/privacy"
	"graphfed/runreport"
)

// ClaimParams are a simulation's privacy settings as the claims judge
// them (runreport.Claims), with the agents' default noise filled in.
func ClaimParams(p SimPrivacy) runreport.ClaimParams {
	pick := func(v, def float64) float64 {
		if v != 0 {
			return v
		}
		return def
	}
	return runreport.ClaimParams{Accountant: p.Accountant.String(), Delta: p.Delta, NodeTarget: p.NodeTarget, ClientBudget: p.Budget.Epsilon,
		ModelSigma: pick(p.ModelSigma, agent.DefaultModelSigma), GradSigma: pick(p.GradSigma, agent.DefaultGradSigma),
		DescSigma: pick(p.DescSigma, agent.DefaultDescriptorSigma), MarginSigma: agent.DefaultMarginSigma}
}

// privacyReport summarises what the agents reported spending and what the
// ledger holds, for the report.
func privacyReport(final map[string]map[string]float64, ledger []privacy.Entry, p SimPrivacy) map[string]any {
	worst := 0.0
	for _, sc := range final {
		if e := sc["privacy_epsilon_client"]; !math.IsNaN(e) && e > worst {
			worst = e
		}
	}
	seeded := false
	records, secure := 0, 0
	for _, e := range ledger {
		seeded = seeded || e.Seeded
		switch {
		case e.Channel.IsRecord():
			records++
		case e.Channel == privacy.ChannelSecAgg:
			secure++
		}
	}
	// ledger_entries counts the banks' releases and calibrations, as
	// before the aggregator kept its records there and the banks their
	// secure-aggregation records (ledger_secagg_records).
	out := map[string]any{
		"delta": p.Delta, "accountant": p.Accountant.String(), "epsilon_client_max": worst,
		"ledger_entries": len(ledger) - records - secure, "ledger_records": records, "seeded_noise": seeded,
	}
	if secure > 0 {
		out["ledger_secagg_records"] = secure
	}
	if p.ExportLedger != "" {
		out["ledger"] = p.ExportLedger
	}
	// Per-node embedding ε at the 90th-percentile metric distance, recomputed
	// from the ledger as `graphfed audit` would.
	if rep, err := privacy.Audit(ledger, privacy.AuditOptions{Kind: p.Accountant, Delta: p.Delta}); err != nil {
		out["audit_error"] = err.Error()
	} else {
		for _, pe := range rep.Percentiles {
			if pe.Q == 90 {
				out["rho_p90"], out["epsilon_p90"], out["epsilon_p90_median_node"] = pe.Rho, pe.WorstEpsilon, pe.MedianEpsilon
				out["releases_worst_node"] = pe.WorstReleases
			}
		}
		// Which channels carry a DP guarantee, in words and as lists.
		out["channels"], out["dp_channels"], out["no_dp_channels"] = runreport.ClaimsMap(runreport.Claims(rep, ClaimParams(p)))
		if w := rep.SecureAggregation.Words(); len(w) > 0 {
			out["secure_aggregation"] = w // from the banks' ledger records alone
		}
	}
	if p.NodeTarget > 0 {
		out["target_epsilon"], out["emb_releases_planned"] = p.NodeTarget, p.EmbReleases
	}
	lo, hi := math.Inf(1), 0.0
	for _, e := range ledger {
		if e.Channel == privacy.ChannelEmb {
			lo, hi = math.Min(lo, e.Sigma), math.Max(hi, e.Sigma)
		}
	}
	if hi > 0 {
		out["emb_sigma_min"], out["emb_sigma_max"] = lo, hi
	}
	if seeded {
		out["note"] = "noise seeded with --seed: reproducible simulation, not a privacy claim"
	}
	return out
}

// progressClaims is the short per-round form for progress lines: the
// embedding ε at p90 against its target, and the client channels' ε with
// whether they carry a guarantee.
func progressClaims(nodeEps, clientEps float64, p SimPrivacy) string {
	emb := fmt.Sprintf("emb ε_p90=%.3g", nodeEps)
	switch {
	case p.NodeTarget > 0 && nodeEps <= p.NodeTarget*(1+1e-9):
		emb = fmt.Sprintf("emb DP ε_p90=%.3g≤%g", nodeEps, p.NodeTarget)
	case p.NodeTarget > 0:
		// The gate holds the target at the ρ of each release; a later
		// calibration (of embeddings it then refused to release) can
		// measure a larger ρ, at which the releases made cost more.
		emb = fmt.Sprintf("emb ε_p90=%.3g at the latest ρ (target %g held at release-time ρ)", nodeEps, p.NodeTarget)
	}
	bound := float64(runreport.MeaningfulEpsilon)
	if p.Budget.Epsilon > 0 {
		bound = p.Budget.Epsilon
	}
	model := fmt.Sprintf("model DP ε=%.3g", clientEps)
	if clientEps > bound {
		model = fmt.Sprintf("model no-DP (ε=%.2g)", clientEps)
	}
	return emb + " " + model
}

// NodeTargetPlan states the node target and the σ0 it implies before the
// run: σ0 depends on ρ_p90, which each bank measures on the embeddings of
// each exchange before releasing them (privacy/target.go).
func NodeTargetPlan(p SimPrivacy) (string, error) {
	mu := privacy.MaxMu(p.NodeTarget, p.Delta, p.Accountant)
	var ex []string
	for _, rho := range []float64{0.4, 0.7} {
		s, err := privacy.SigmaForEpsilon(p.NodeTarget, p.Delta, rho, p.EmbReleases, p.Accountant)
		if err != nil {
			return "", err
		}
		ex = append(ex, fmt.Sprintf("%.3g at ρ=%g", s, rho))
	}
	sigma := p.ModelSigma
	if sigma == 0 {
		sigma = agent.DefaultModelSigma
	}
	return fmt.Sprintf("privacy: emb target ε ≤ %g per node at p90 ρ (δ=%g, %s accountant) over %d planned releases: μ* = %.4g, "+
		"σ0 = ρ_p90·sqrt(R)/μ* (%s); each bank derives σ0 before each release from the ρ_p90 it measures and the budget left, and its gate refuses what would overspend. "+
		"model, grad: no target (σ1 = %g)\n", p.NodeTarget, p.Delta, p.Accountant, p.EmbReleases, mu, strings.Join(ex, ", "), sigma), nil
}
