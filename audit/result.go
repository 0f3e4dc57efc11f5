package audit

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"graphfed/privacy"
	"graphfed/runreport"
)

// Result is an audit's outcome.
type Result struct {
	Report privacy.Report
	Claims []runreport.Claim
	// Clients counts the job/client pairs that released something.
	Clients int
	// PNG and HTML are the files written; empty: not asked for.
	PNG, HTML string
}

// WriteText writes the audit as `graphfed audit` prints it, and the
// files it wrote.
func (r Result) WriteText(w io.Writer) error {
	if err := r.Report.WriteText(w); err != nil {
		return err
	}
	if r.PNG != "" {
		if _, err := fmt.Fprintf(w, "plot written to %s\n", r.PNG); err != nil {
			return err
		}
	}
	if r.HTML != "" {
		if _, err := fmt.Fprintf(w, "audit page written to %s\n", r.HTML); err != nil {
			return err
		}
	}
	return nil
}

// Metrics are the metrics of `graphfed audit --json`.
func (r Result) Metrics() map[string]any {
	rep := r.Report
	m := map[string]any{"entries": rep.Entries, "releases": rep.Releases, "nodes": rep.Nodes,
		"records": rep.Integrity.Records, "rejected": len(rep.Integrity.Rejected), "chain_breaks": len(rep.Integrity.Breaks),
		"aggregator_records": rep.Records,
		"ledger_integrity":   rep.Integrity}
	if sa := rep.SecureAggregation; sa.Records > 0 {
		// Per bank the rounds it recorded, per channel the rounds
		// aggregated securely, and the rounds whose records disagree.
		m["secure_aggregation"] = sa
	}
	return m
}

// Privacy is the privacy object of `graphfed audit --json`: the ε at
// every percentile of the node distances and the worst ε per channel.
func (r Result) Privacy() map[string]any {
	rep := r.Report
	priv := map[string]any{"delta": rep.Delta, "accountant": rep.Kind.String(), "seeded": rep.Seeded, "rho_source": rep.RhoSource,
		"ledger_signed": rep.Integrity.Signed, "claim_unverified": rep.Integrity.Unverified,
		// false when heads disagree, anchors name lost records, or a job
		// the aggregator recorded as started has no done record.
		"integrity": rep.Integrity.Intact}
	for _, p := range rep.Percentiles {
		q := strconv.FormatFloat(p.Q, 'g', -1, 64)
		priv["epsilon_p"+q] = p.WorstEpsilon
		priv["rho_p"+q] = p.Rho
	}
	for ch, eps := range rep.ChannelMax {
		priv["epsilon_"+string(ch)] = eps
	}
	// What the aggregator saw of the model and grad channels (only with
	// secagg records in the ledger): R of M rounds aggregated securely, the
	// smallest t and cohort of those rounds, and the claim in words. The
	// ε above are unchanged by it.
	if sa := rep.SecureAggregation; sa.Records > 0 {
		for _, c := range sa.Channels {
			ch := string(c.Channel)
			priv["secure_rounds_"+ch], priv["rounds_"+ch] = c.Secure, c.Rounds
			priv["secure_threshold_"+ch], priv["secure_cohort_"+ch] = c.Threshold, c.CohortMin
		}
		priv["secure_aggregation"] = sa.Words()
	}
	return priv
}

// WriteHTML writes the audit page to path, a new or truncated file.
func WriteHTML(path string, page runreport.AuditPage) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("audit page: %w", err)
	}
	if err := runreport.WriteAudit(f, page); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("audit page: %w", err)
	}
	return nil
}
