package audit

import (
	"context"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/runreport"
)

// Config is one audit. Exactly one source: Ledger, a ledger file, or
// NATS with Job, the job's JetStream ledger. DefaultConfig holds the
// defaults; a zero Delta is refused, not defaulted.
type Config struct {
	Ledger string // ledger file (JSON lines written by a FileLedger)
	NATS   string // server or cluster URL of the job's JetStream ledger
	Creds  string // NATS credentials file, with NATS
	TLS    deploy.TLSFiles
	// Keyring, when set, requires every entry to be signed by its bank's
	// key; unsigned and forged entries are skipped and listed. The
	// accounts layout needs it to name the parties' streams.
	Keyring string
	// Job audits only this job; empty: every job in the ledger file.
	// Required with NATS.
	Job        string
	Delta      float64 // δ of every ε reported, in (0, 1)
	Accountant string  // rdp or exact
	// Rho are node distances "q=rho,..." instead of the ledger's
	// calibrations (ParseRho); empty: the ledger's.
	Rho string
	// PNG and HTML, when set, are written: a plot of ε against rounds
	// and a self-contained audit page.
	PNG, HTML string
	// TargetEpsilon and BudgetEpsilon are the per-node ε target and the
	// per-client ε budget the run was given, to judge the claims against
	// (0: none).
	TargetEpsilon, BudgetEpsilon float64
	// ExpectHeads is the aggregator's JSON report (or a JSON list of
	// heads): every chain must reach the final head it lists.
	ExpectHeads string
}

// DefaultConfig is `graphfed audit` without flags but its source.
func DefaultConfig() Config {
	return Config{Delta: deploy.DefaultDelta, Accountant: privacy.RDP.String()}
}

// Run audits cfg's ledger; log gets the reading's warnings (a torn last
// line of a ledger file).
func Run(ctx context.Context, cfg Config, log zerolog.Logger) (Result, error) {
	l, done, err := openLedger(ctx, cfg, log)
	if err != nil {
		return Result{}, fmt.Errorf("audit: %w", err)
	}
	defer done()
	r, err := run(ctx, cfg, l)
	if err != nil {
		return Result{}, fmt.Errorf("audit: %w", err)
	}
	return r, nil
}

func run(ctx context.Context, cfg Config, l privacy.Ledger) (Result, error) {
	kind, err := privacy.ParseAccountantKind(cfg.Accountant)
	if err != nil {
		return Result{}, err
	}
	rho, err := ParseRho(cfg.Rho)
	if err != nil {
		return Result{}, fmt.Errorf("--rho: %w", err)
	}
	var expect []privacy.Head
	if cfg.ExpectHeads != "" {
		b, err := os.ReadFile(cfg.ExpectHeads)
		if err != nil {
			return Result{}, fmt.Errorf("--expect-heads: %w", err)
		}
		if expect, err = privacy.ParseHeads(b); err != nil {
			return Result{}, fmt.Errorf("--expect-heads %s: %w", cfg.ExpectHeads, err)
		}
		if expect == nil {
			expect = []privacy.Head{} // given, and naming no chain: the audit says so
		}
	}
	vo := privacy.VerifyOptions{Job: cfg.Job}
	if cfg.Keyring != "" {
		ring, err := bus.LoadKeyring(cfg.Keyring)
		if err != nil {
			return Result{}, fmt.Errorf("--keyring: %w", err)
		}
		if cfg.Job != "" && ring.Job() != cfg.Job {
			return Result{}, fmt.Errorf("--keyring %s is job %s's, not %s's", cfg.Keyring, ring.Job(), cfg.Job)
		}
		vo.Keys = ring
	}
	// Nothing stored in the ledger can stop the audit: junk, forgeries and
	// entries out of their chain are skipped and listed in the report.
	rd, err := privacy.ReadLedger(ctx, l, vo)
	if err != nil {
		return Result{}, err
	}
	rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Kind: kind, Delta: cfg.Delta, Job: cfg.Job, Rho: rho, ExpectHeads: expect})
	if err != nil {
		return Result{}, err
	}
	// The ledger holds no noise settings beyond each release's: the
	// claims name no σ, and are judged against the targets given.
	r := Result{Report: rep, Clients: countClients(rd.Entries, cfg.Job),
		Claims: runreport.Claims(rep, runreport.ClaimParams{Accountant: kind.String(), Delta: cfg.Delta,
			NodeTarget: cfg.TargetEpsilon, ClientBudget: cfg.BudgetEpsilon})}
	if cfg.PNG != "" {
		if err := runreport.WriteEpsilonPNG(rep, r.Claims, cfg.TargetEpsilon, cfg.PNG); err != nil {
			return Result{}, err
		}
		r.PNG = cfg.PNG
	}
	if cfg.HTML != "" {
		page := runreport.AuditPage{Source: cfg.source(), Audit: rep, Claims: r.Claims, Target: cfg.TargetEpsilon}
		if err := WriteHTML(cfg.HTML, page); err != nil {
			return Result{}, err
		}
		r.HTML = cfg.HTML
	}
	return r, nil
}

// countClients counts the job/client pairs of entries that released
// something (of job, unless empty).
func countClients(entries []privacy.Entry, job string) int {
	clients := map[string]bool{}
	for _, e := range entries {
		if e.Client == privacy.AggregatorClient {
			continue // its records release nothing
		}
		if job == "" || e.Job == job {
			clients[e.Job+"/"+e.Client] = true
		}
	}
	return len(clients)
}

// source names the audited ledger, as the audit page does.
func (c Config) source() string {
	if c.Ledger != "" {
		return c.Ledger
	}
	return "job " + c.Job + " at " + c.NATS
}
