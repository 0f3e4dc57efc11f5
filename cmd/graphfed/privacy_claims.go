package main

import (
	"fmt"

	"graphfed/agent"
	"graphfed/job"
	"graphfed/runreport"
)

// claimParams are the simulation's privacy settings as the claims judge
// them (runreport.Claims), with the agents' default noise filled in.
func claimParams(p job.SimPrivacy) runreport.ClaimParams {
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

// progressClaims is the short per-round form for progress lines: the
// embedding ε at p90 against its target, and the client channels' ε with
// whether they carry a guarantee.
func progressClaims(nodeEps, clientEps float64, p job.SimPrivacy) string {
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
