package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/runreport"
)

// auditFlags are the flags of `graphfed audit`.
type auditFlags struct {
	ledger     string
	natsURL    string
	creds      string
	tls        tlsFlags
	keyring    string
	job        string
	delta      float64
	accountant string
	rho        string
	png        string
	html       string
	target     float64
	budget     float64
	heads      string
}

// newAuditCmd is `graphfed audit`: recompute every ε from a ledger alone.
func newAuditCmd(g *globalFlags) *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:   "audit (--ledger PATH | --nats URL --job ID) [--expect-heads REPORT] [--delta D] [--accountant rdp|exact] [--png FILE] [--html FILE]",
		Short: "Recompute the privacy spent from a release ledger alone",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			log := g.logger()
			l, done, err := openAuditLedger(cmd.Context(), &f, log)
			if err != nil {
				return fmt.Errorf("audit: %w", err)
			}
			defer done()
			return runAudit(cmd.Context(), g, l, &f, start)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.ledger, "ledger", "", "ledger file (JSON lines written by a FileLedger); read, never modified")
	fl.StringVar(&f.natsURL, "nats", "", "NATS server or cluster URL: audit the JetStream ledger of --job (read, never modified)")
	fl.StringVar(&f.creds, "creds", "", "NATS credentials file (with --nats)")
	f.tls.register(cmd)
	fl.StringVar(&f.keyring, "keyring", "", "the job's keyring.json: require every entry to be signed by its bank's key (unsigned and forged entries are skipped and listed)")
	fl.StringVar(&f.job, "job", "", "audit only this job (default: every job in the ledger file; required with --nats)")
	fl.Float64Var(&f.delta, "delta", 1e-4, "δ of every ε reported")
	fl.StringVar(&f.accountant, "accountant", "rdp", "rdp or exact")
	fl.StringVar(&f.rho, "rho", "", "node distances instead of the ledger's calibrations, e.g. 50=0.0533,90=0.1466")
	fl.StringVar(&f.png, "png", "", "write a plot of ε against rounds to this file (one panel per meaning)")
	fl.StringVar(&f.html, "html", "", "write the audit as a self-contained HTML page (the audit part of report.html) to this file")
	fl.Float64Var(&f.target, "target-epsilon", 0, "the embeddings' per-node ε target the run was given, to judge the claims against (0: none)")
	fl.Float64Var(&f.budget, "budget-epsilon", 0, "the per-client ε budget the run was given, to judge the claims against (0: none)")
	fl.StringVar(&f.heads, "expect-heads", "", "the aggregator's JSON report (or a JSON list of heads): check every chain reaches the final head it lists, "+
		"which catches a ledger cut back consistently, the aggregator's done record included")
	return cmd
}

// openAuditLedger picks the ledger source: a ledger file (--ledger) or a
// job's JetStream stream (--nats with --job), both read-only. done releases
// the source (the NATS connection) once the audit is over.
func openAuditLedger(ctx context.Context, f *auditFlags, log zerolog.Logger) (l privacy.Ledger, done func(), err error) {
	switch {
	case f.ledger != "" && f.natsURL != "":
		return nil, nil, fmt.Errorf("--ledger and --nats are mutually exclusive: audit a ledger file or a job's JetStream ledger, not both")
	case f.natsURL != "":
		return openAuditJetStream(ctx, f, log)
	case f.ledger == "":
		return nil, nil, fmt.Errorf("--ledger PATH or --nats URL --job ID is required")
	}
	fl, err := privacy.OpenFileLedgerReadOnly(f.ledger)
	if err != nil {
		return nil, nil, err
	}
	if tt, ok := fl.TornTail(); ok {
		log.Warn().Str("ledger", f.ledger).Int64("offset", tt.Offset).Int("bytes", tt.Bytes).Str("head", tt.Head).
			Msg("ledger ends in a torn line (a crash during an append whose release was never published); skipped")
	}
	return fl, func() {}, nil
}

// openAuditJetStream binds, read-only, to the ledger stream of f.job: it
// never creates a stream, and refuses one that is not append-only.
func openAuditJetStream(ctx context.Context, f *auditFlags, log zerolog.Logger) (privacy.Ledger, func(), error) {
	if f.job == "" {
		return nil, nil, fmt.Errorf("--nats needs --job: each job's ledger is its own stream")
	}
	if !bus.ValidID(f.job) {
		return nil, nil, fmt.Errorf("--job %q does not match [a-z0-9-]{1,64}", f.job)
	}
	nc, err := bus.Connect(f.natsURL, f.tls.connect(bus.ConnectOptions{Name: "graphfed-audit-" + f.job, Creds: f.creds}))
	if err != nil {
		return nil, nil, err
	}
	// Connect keeps retrying an unreachable server in the background; an
	// audit should fail now instead.
	if !nc.IsConnected() {
		nc.Close()
		return nil, nil, fmt.Errorf("--nats %s: no server reachable", f.natsURL)
	}
	var ring *bus.Keyring
	if f.keyring != "" {
		if ring, err = bus.LoadKeyring(f.keyring); err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("--keyring: %w", err)
		}
	}
	// In the accounts layout each party's entries are a stream of their
	// own, and the keyring names the parties.
	l, err := deploy.OpenAuditLedger(ctx, nc, f.job, ring)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	log.Debug().Str("nats", nc.ConnectedUrlRedacted()).Str("stream", l.Stream()).Msg("auditing the JetStream ledger")
	return l, nc.Close, nil
}

func runAudit(ctx context.Context, g *globalFlags, l privacy.Ledger, f *auditFlags, start time.Time) error {
	kind, err := privacy.ParseAccountantKind(f.accountant)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	rho, err := parseRho(f.rho)
	if err != nil {
		return fmt.Errorf("audit: --rho: %w", err)
	}
	var expect []privacy.Head
	if f.heads != "" {
		b, err := os.ReadFile(f.heads)
		if err != nil {
			return fmt.Errorf("audit: --expect-heads: %w", err)
		}
		if expect, err = privacy.ParseHeads(b); err != nil {
			return fmt.Errorf("audit: --expect-heads %s: %w", f.heads, err)
		}
		if expect == nil {
			expect = []privacy.Head{} // given, and naming no chain: the audit says so
		}
	}
	vo := privacy.VerifyOptions{Job: f.job}
	if f.keyring != "" {
		ring, err := bus.LoadKeyring(f.keyring)
		if err != nil {
			return fmt.Errorf("audit: --keyring: %w", err)
		}
		if f.job != "" && ring.Job() != f.job {
			return fmt.Errorf("audit: --keyring %s is job %s's, not %s's", f.keyring, ring.Job(), f.job)
		}
		vo.Keys = ring
	}
	// Nothing stored in the ledger can stop the audit: junk, forgeries and
	// entries out of their chain are skipped and listed in the report.
	rd, err := privacy.ReadLedger(ctx, l, vo)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	entries := rd.Entries
	rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Kind: kind, Delta: f.delta, Job: f.job, Rho: rho, ExpectHeads: expect})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := rep.WriteText(g.humanOut()); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	// The ledger holds no noise settings beyond each release's: the
	// claims name no σ, and are judged against the targets given.
	claims := runreport.Claims(rep, runreport.ClaimParams{Accountant: kind.String(), Delta: f.delta, NodeTarget: f.target, ClientBudget: f.budget})
	if f.png != "" {
		if err := runreport.WriteEpsilonPNG(rep, claims, f.target, f.png); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		fmt.Fprintf(g.humanOut(), "plot written to %s\n", f.png)
	}
	if f.html != "" {
		if err := writeAuditHTML(f, rep, claims); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		fmt.Fprintf(g.humanOut(), "audit page written to %s\n", f.html)
	}

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
	clients := map[string]bool{}
	for _, e := range entries {
		if e.Client == privacy.AggregatorClient {
			continue // its records release nothing
		}
		if f.job == "" || e.Job == f.job {
			clients[e.Job+"/"+e.Client] = true
		}
	}
	return g.emit(Report{
		Command: "audit", Algo: rep.Kind.String(), Clients: len(clients), Rounds: len(rep.Rounds),
		Metrics: map[string]any{"entries": rep.Entries, "releases": rep.Releases, "nodes": rep.Nodes,
			"records": rep.Integrity.Records, "rejected": len(rep.Integrity.Rejected), "chain_breaks": len(rep.Integrity.Breaks),
			"aggregator_records": rep.Records,
			"ledger_integrity":   rep.Integrity},
		Privacy: priv,
	}, start)
}

// parseRho reads "q=rho,q=rho"; empty means none (use the ledger).
func parseRho(s string) ([]privacy.RhoAt, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []privacy.RhoAt
	for _, part := range strings.Split(s, ",") {
		qs, rs, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%q is not percentile=distance", part)
		}
		q, err := strconv.ParseFloat(qs, 64)
		if err != nil {
			return nil, err
		}
		r, err := strconv.ParseFloat(rs, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, privacy.RhoAt{Q: q, Rho: r})
	}
	return out, nil
}

// writeAuditHTML writes the audit page to f.html.
func writeAuditHTML(f *auditFlags, rep privacy.Report, claims []runreport.Claim) error {
	src := f.ledger
	if src == "" {
		src = "job " + f.job + " at " + f.natsURL
	}
	return writeFileWith(f.html, func(w *os.File) error {
		return runreport.WriteAudit(w, runreport.AuditPage{Source: src, Audit: rep, Claims: claims, Target: f.target})
	})
}
