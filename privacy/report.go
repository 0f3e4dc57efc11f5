package privacy

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as plain-text tables: per client channel, per
// client, and per-node ε by percentile (the layout of CE-FedGNN Table 6,
// one row per percentile).
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "privacy audit: %s accountant, δ=%g, %d entries (%d releases)", r.Kind, r.Delta, r.Entries, r.Releases)
	if r.Records > 0 {
		fmt.Fprintf(&b, " and %d records of the aggregator", r.Records)
	}
	b.WriteString("\n")
	if r.Seeded {
		b.WriteString("WARNING: some releases used a fixed noise seed; this run makes no privacy claim\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if len(r.Channels) > 0 {
		fmt.Fprintln(&b, "\nper client channel (sensitivity 2·clip·sqrt(rows), replace-one):")
		fmt.Fprintln(tw, "job\tclient\tchannel\treleases\tε")
		for _, c := range r.Channels {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", c.Job, c.Client, c.Channel, c.Releases, fmtEps(c.Epsilon))
		}
		tw.Flush()
		fmt.Fprintln(&b, "\nper client, all model/grad/margin/descriptor releases composed:")
		fmt.Fprintln(tw, "job\tclient\treleases\tε")
		for _, c := range r.Clients {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Job, c.Client, c.Releases, fmtEps(c.Epsilon))
		}
		tw.Flush()
	}
	if len(r.Descriptors) > 0 {
		fmt.Fprintln(&b, "\ndescriptor releases (FedGSP, once per client; rows of norm ≤ clip, replace-one):")
		fmt.Fprintln(tw, "job\tclient\tseq\tround\trows×dim\tσ\tsensitivity\tε")
		for _, d := range r.Descriptors {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d×%d\t%g\t%.4g\t%s\n", d.Job, d.Client, d.Seq, d.Round, d.Rows, d.Dim, d.Sigma, d.Sensitivity, fmtEps(d.Epsilon))
		}
		tw.Flush()
	}
	if sa := r.SecureAggregation; sa.Records > 0 {
		fmt.Fprintf(&b, "\nsecure aggregation (%d records of the banks; no ε changes):\n", sa.Records)
		fmt.Fprintln(tw, "job\tclient\trounds\tfolded in\tt\tcohort")
		for _, k := range sa.Banks {
			folded := "-"
			if len(k.Folded) > 0 {
				folded = FormatRounds(k.Folded)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", k.Job, k.Client, FormatRounds(k.Rounds), folded, k.Threshold, k.Cohort)
		}
		tw.Flush()
		for _, w := range sa.Words() {
			fmt.Fprintf(&b, "  %s\n", w)
		}
		for _, c := range sa.Conflicts {
			fmt.Fprintf(&b, "  NOT COUNTED: job %s round %d: %s\n", c.Job, c.Round, c.Detail)
		}
	}
	src := r.RhoSource
	if src == "ledger calibration" {
		src += " (each client's nodes at its own ρ; column ρ: the largest)"
	}
	fmt.Fprintf(&b, "\nper node (embeddings): %d nodes released; distances: %s\n", r.Nodes, src)
	for _, c := range r.Calibrations {
		mode := "exact"
		if c.Calibration.Sampled > 0 {
			mode = fmt.Sprintf("sampled %d", c.Calibration.Sampled)
		}
		fmt.Fprintf(&b, "  calibration %s/%s seq %d round %d: k=%d n=%d (%s)\n",
			c.Job, c.Client, c.Seq, c.Round, c.Calibration.K, c.Calibration.N, mode)
	}
	if len(r.Percentiles) > 0 {
		fmt.Fprintln(tw, "percentile\tρ\tworst node ε\tmedian node ε\tworst node releases")
		for _, p := range r.Percentiles {
			fmt.Fprintf(tw, "%g\t%.4f\t%s\t%s\t%d\n", p.Q, p.Rho, fmtEps(p.WorstEpsilon), fmtEps(p.MedianEpsilon), p.WorstReleases)
		}
		tw.Flush()
	}
	if r.Integrity.Records > 0 || !r.Integrity.Clean() {
		r.Integrity.writeText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtEps(e float64) string { return fmt.Sprintf("%.3f", e) }
