package runreport

import (
	"fmt"
	"html/template"

	"graphfed/privacy"
)

// privacyView is the audit as the page shows it: the claims in plain
// words, the tables, and the ε plots one meaning each.
type privacyView struct {
	A        *privacy.Report
	Guarded  []Claim // channels with a DP guarantee
	Open     []Claim // released channels without one
	Words    []template.HTML
	Plots    []template.HTML
	Target   float64
	Unlisted string
}

func newPrivacyView(rep *privacy.Report, claims []Claim, target float64) *privacyView {
	v := &privacyView{A: rep, Target: target}
	for _, c := range claims {
		if c.DP {
			v.Guarded = append(v.Guarded, c)
		} else {
			v.Open = append(v.Open, c)
		}
		v.Words = append(v.Words, plainWords(c, rep.Delta))
	}
	for _, pn := range epsilonPanels(*rep, claims, target) {
		v.Plots = append(v.Plots, Plot{Title: pn.Title, XLabel: "round", YLabel: pn.YLabel, Log: true, Series: pn.Series}.SVG())
	}
	return v
}

// channelNames says what each ledger channel carries.
var channelNames = map[privacy.Channel]string{
	privacy.ChannelEmb:        "boundary-node embeddings (sent to the other clients)",
	privacy.ChannelModel:      "model updates (sent to the aggregator)",
	privacy.ChannelGrad:       "gradient estimators (sent to the aggregator)",
	privacy.ChannelMargin:     "similarity margins (sent to the aggregator)",
	privacy.ChannelDescriptor: "spectral descriptors (sent once to the aggregator)",
}

// plainWords is a claim as a sentence a privacy officer can act on.
func plainWords(c Claim, delta float64) template.HTML {
	what := channelNames[c.Channel]
	if what == "" {
		what = string(c.Channel)
	}
	unit := "per client"
	if c.PerNode {
		unit = "per node (the node with the most privacy loss, at the 90th-percentile distance ρ)"
	}
	var s string
	switch {
	case c.DP:
		s = fmt.Sprintf("<b>%s</b> — %s: <b>carries a differential-privacy guarantee</b>, ε = %s %s at δ = %g.",
			esc(string(c.Channel)), esc(what), fmtEps(c.Epsilon), unit, delta)
	case c.Epsilon > 1e3 && c.Secure != "":
		s = fmt.Sprintf("<b>%s</b> — %s: <b>carries no meaningful DP guarantee</b> (ε ≈ %s %s), but it is <b>aggregated securely</b>: %s.",
			esc(string(c.Channel)), esc(what), fmtEps(c.Epsilon), unit, esc(c.Secure))
	case c.Epsilon > 1e3:
		s = fmt.Sprintf("<b>%s</b> — %s: <b>carries no meaningful guarantee</b>. Its noise gives ε ≈ %s %s, "+
			"a number so large that it bounds nothing: treat what this channel sends as if it were sent in the clear.",
			esc(string(c.Channel)), esc(what), fmtEps(c.Epsilon), unit)
	default:
		s = fmt.Sprintf("<b>%s</b> — %s: <b>carries no DP guarantee</b> that the run can state (%s).", esc(string(c.Channel)), esc(what), esc(c.Text))
	}
	return template.HTML(s + ` <span class="muted">(` + esc(c.Text) + `)</span>`)
}
