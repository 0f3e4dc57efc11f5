package runreport

import (
	"fmt"
	"slices"
	"strings"

	"graphfed/privacy"
)

// panel is one ε plot: values of one meaning on one axis.
type panel struct {
	Title, YLabel string
	Series        []Series
	NoGuarantee   bool // ε of channels without a DP guarantee
}

// epsilonPanels splits the audit's ε against rounds by meaning, each on
// an axis of its own: per node (the embeddings, at each calibrated ρ_q,
// with the target when one was set), per client on channels that carry a
// guarantee, and per client on channels that carry none (the model's ε of
// 10^11 at σ1 = 1e-3, which bounds nothing and would flatten every other
// curve beside it). Panels without a series are left out.
func epsilonPanels(rep privacy.Report, claims []Claim, target float64) []panel {
	dp := map[privacy.Channel]bool{}
	for _, c := range claims {
		dp[c.Channel] = c.DP
	}
	node := panel{Title: "embeddings: ε per node (worst node at each percentile's ρ)", YLabel: "ε per node"}
	for i, pc := range rep.Percentiles {
		s := Series{Name: fmt.Sprintf("p%g node (ρ=%.3f)", pc.Q, pc.Rho)}
		for _, rd := range rep.Rounds {
			if i < len(rd.Nodes) {
				s.X, s.Y = append(s.X, float64(rd.Round)), append(s.Y, rd.Nodes[i])
			}
		}
		node.Series = append(node.Series, s)
	}
	if target > 0 && len(node.Series) > 0 && len(rep.Rounds) > 0 {
		first, last := float64(rep.Rounds[0].Round), float64(rep.Rounds[len(rep.Rounds)-1].Round)
		node.Series = append(node.Series, Series{Name: fmt.Sprintf("target ε = %g (at p90)", target), X: []float64{first, last}, Y: []float64{target, target}})
	}
	withDP := panel{Title: "client channels with a DP guarantee: ε per client (worst client)", YLabel: "ε per client"}
	without := panel{Title: "client channels WITHOUT a DP guarantee: ε per client (bounds nothing)", YLabel: "ε per client (no guarantee)", NoGuarantee: true}
	var channels []privacy.Channel
	for ch := range rep.ChannelMax {
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	for _, ch := range channels {
		s := Series{Name: string(ch) + " (worst client)"}
		for _, rd := range rep.Rounds {
			if e, ok := rd.Channels[ch]; ok {
				s.X, s.Y = append(s.X, float64(rd.Round)), append(s.Y, e)
			}
		}
		if dp[ch] {
			withDP.Series = append(withDP.Series, s)
		} else {
			without.Series = append(without.Series, s)
		}
	}
	var out []panel
	for _, p := range []panel{node, withDP, without} {
		if len(p.Series) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// noGuaranteeNote names the channels without a guarantee and their ε, for
// a plot that leaves them out.
func noGuaranteeNote(claims []Claim) string {
	var parts []string
	for _, c := range claims {
		if !c.DP && !c.PerNode {
			parts = append(parts, fmt.Sprintf("%s (ε = %.2g per client)", c.Channel, c.Epsilon))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "not shown, no DP guarantee: " + strings.Join(parts, ", ")
}
