package runreport

import (
	"fmt"
	"io"
	"math"
	"strings"

	"graphfed/privacy"
)

// MeaningfulEpsilon is the largest ε a run calls a DP guarantee when no
// target was set for the channel: the range the literature reports as
// meaningful (CE-FedGNN's Table 6 goes to about 10 at its 50th
// percentile). Above it a channel "carries no DP guarantee", whatever its
// noise: at σ1 = 1e-3 the model channel's ε is about 10^11.
const MeaningfulEpsilon = 10

// ClaimParams are the settings a run's claims are judged against; they
// are stored in summary.json so that a rebuilt report states the same.
type ClaimParams struct {
	Accountant string  `json:"accountant"`
	Delta      float64 `json:"delta"`
	// NodeTarget is the per-node ε target of the embeddings (0: none).
	NodeTarget float64 `json:"node_target,omitempty"`
	// ClientBudget is the per-client ε budget (0: none).
	ClientBudget float64 `json:"client_budget,omitempty"`
	// The noise multipliers of the client channels; 0: not known (a
	// ledger audited alone), and the claim then names none.
	ModelSigma  float64 `json:"model_sigma,omitempty"`
	GradSigma   float64 `json:"grad_sigma,omitempty"`
	DescSigma   float64 `json:"descriptor_sigma,omitempty"`
	MarginSigma float64 `json:"margin_sigma,omitempty"`
}

// Claim is what a run can state about one channel's privacy.
type Claim struct {
	Channel privacy.Channel
	DP      bool    // the channel carries a DP guarantee
	Epsilon float64 // per client (model, grad, margin, descriptor) or per node at p90 ρ (emb)
	PerNode bool    // Epsilon is per node (emb), not per client
	Text    string  // "emb: DP, ε ≤ 8 per node at p90 ρ (δ=0.0001)"
	// Secure, for a channel the banks' ledgers record as aggregated
	// securely, says what the aggregator saw (privacy.SecureChannel.Words).
	Secure string `json:",omitempty"`
}

// Claims states, per released channel, whether the run carries a DP
// guarantee there: embeddings against the node target (or
// MeaningfulEpsilon without one) at the audit's p90 ρ, the other channels
// against the client budget (or MeaningfulEpsilon) at their noise.
func Claims(rep privacy.Report, p ClaimParams) []Claim {
	var out []Claim
	for _, ch := range []privacy.Channel{privacy.ChannelEmb, privacy.ChannelModel, privacy.ChannelGrad, privacy.ChannelMargin, privacy.ChannelDescriptor} {
		if ch == privacy.ChannelEmb {
			if rep.Nodes > 0 {
				out = append(out, embClaim(rep, p))
			}
			continue
		}
		eps, ok := rep.ChannelMax[ch]
		if !ok {
			continue
		}
		bound := float64(MeaningfulEpsilon)
		if p.ClientBudget > 0 {
			bound = p.ClientBudget
		}
		c := Claim{Channel: ch, Epsilon: eps, DP: eps <= bound*(1+1e-9)}
		noise := ""
		if name, sigma := channelNoise(ch, p); sigma > 0 {
			noise = fmt.Sprintf(" at %s = %g", name, sigma)
		}
		if c.DP {
			c.Text = fmt.Sprintf("%s: DP, ε = %.3g per client%s (δ=%g, %s)", ch, eps, noise, rep.Delta, rep.Kind)
		} else {
			c.Text = fmt.Sprintf("%s: no DP guarantee%s (ε = %.3g per client, δ=%g)", ch, noise, eps, rep.Delta)
		}
		if sc, ok := rep.SecureAggregation.Channel(ch); ok && sc.Secure > 0 {
			c.Secure = sc.Words()
		}
		out = append(out, c)
	}
	return out
}

// embClaim judges the embeddings at the audit's p90 ρ.
func embClaim(rep privacy.Report, p ClaimParams) Claim {
	eps, rho := math.NaN(), math.NaN()
	for _, pe := range rep.Percentiles {
		if pe.Q == 90 {
			eps, rho = pe.WorstEpsilon, pe.Rho
		}
	}
	c := Claim{Channel: privacy.ChannelEmb, Epsilon: eps, PerNode: true}
	switch {
	case math.IsNaN(eps):
		c.Text = "emb: no DP guarantee stated (no calibrated p90 ρ in the ledger)"
	case p.NodeTarget > 0 && eps <= p.NodeTarget*(1+1e-9):
		c.DP = true
		c.Text = fmt.Sprintf("emb: DP, ε ≤ %g per node at p90 ρ (δ=%g, %s; spent %.3g, ρ_p90 ≤ %.3g)", p.NodeTarget, rep.Delta, rep.Kind, eps, rho)
	case p.NodeTarget > 0:
		c.Text = fmt.Sprintf("emb: target ε ≤ %g MISSED: ε = %.4g per node at p90 ρ (δ=%g, %s)", p.NodeTarget, eps, rep.Delta, rep.Kind)
	case eps <= MeaningfulEpsilon:
		c.DP = true
		c.Text = fmt.Sprintf("emb: DP, ε = %.3g per node at p90 ρ (δ=%g, %s; no target)", eps, rep.Delta, rep.Kind)
	default:
		c.Text = fmt.Sprintf("emb: no DP guarantee: ε = %.4g per node at p90 ρ (δ=%g, %s; no target, --target-epsilon sets one)", eps, rep.Delta, rep.Kind)
	}
	return c
}

// channelNoise names a client channel's noise and its σ in the run.
func channelNoise(ch privacy.Channel, p ClaimParams) (string, float64) {
	switch ch {
	case privacy.ChannelModel:
		return "σ1", p.ModelSigma
	case privacy.ChannelGrad:
		return "σ2", p.GradSigma
	case privacy.ChannelDescriptor:
		return "σ_desc", p.DescSigma
	}
	return "σ", p.MarginSigma
}

// ClaimsMap is the claims as the JSON summary carries them.
func ClaimsMap(cs []Claim) (texts map[string]string, dp, noDP []string) {
	texts = map[string]string{}
	dp, noDP = []string{}, []string{}
	for _, c := range cs {
		texts[string(c.Channel)] = c.Text
		if c.DP {
			dp = append(dp, string(c.Channel))
		} else {
			noDP = append(noDP, string(c.Channel))
		}
	}
	return texts, dp, noDP
}

// WriteClaims writes the claims as the head of a text report.
func WriteClaims(w io.Writer, cs []Claim, seeded bool) error {
	var b strings.Builder
	b.WriteString("privacy guarantees by channel:\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s\n", c.Text)
	}
	if seeded {
		b.WriteString("  (noise seeded with --seed: a reproducible simulation, not a privacy claim)\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
