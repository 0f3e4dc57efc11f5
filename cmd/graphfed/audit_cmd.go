package main

import (
	"time"

	"github.com/spf13/cobra"

	"graphfed/audit"
)

// newAuditCmd is `graphfed audit`: flags into audit.Config, every ε
// recomputed from a ledger alone.
func newAuditCmd(g *globalFlags) *cobra.Command {
	cfg := audit.DefaultConfig()
	var tlsf tlsFlags
	cmd := &cobra.Command{
		Use:   "audit (--ledger PATH | --nats URL --job ID) [--expect-heads REPORT] [--delta D] [--accountant rdp|exact] [--png FILE] [--html FILE]",
		Short: "Recompute the privacy spent from a release ledger alone",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			cfg.TLS = tlsf.files
			r, err := audit.Run(cmd.Context(), cfg, g.logger())
			if err != nil {
				return err
			}
			if err := r.WriteText(g.humanOut()); err != nil {
				return err
			}
			return g.emit(Report{Command: "audit", Algo: r.Report.Kind.String(), Clients: r.Clients, Rounds: len(r.Report.Rounds),
				Metrics: r.Metrics(), Privacy: r.Privacy()}, start)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Ledger, "ledger", "", "ledger file (JSON lines written by a FileLedger); read, never modified")
	fl.StringVar(&cfg.NATS, "nats", "", "NATS server or cluster URL: audit the JetStream ledger of --job (read, never modified)")
	fl.StringVar(&cfg.Creds, "creds", "", "NATS credentials file (with --nats)")
	tlsf.register(cmd)
	fl.StringVar(&cfg.Keyring, "keyring", "", "the job's keyring.json: require every entry to be signed by its bank's key (unsigned and forged entries are skipped and listed)")
	fl.StringVar(&cfg.Job, "job", "", "audit only this job (default: every job in the ledger file; required with --nats)")
	fl.Float64Var(&cfg.Delta, "delta", cfg.Delta, "δ of every ε reported")
	fl.StringVar(&cfg.Accountant, "accountant", cfg.Accountant, "rdp or exact")
	fl.StringVar(&cfg.Rho, "rho", "", "node distances instead of the ledger's calibrations, e.g. 50=0.0533,90=0.1466")
	fl.StringVar(&cfg.PNG, "png", "", "write a plot of ε against rounds to this file (one panel per meaning)")
	fl.StringVar(&cfg.HTML, "html", "", "write the audit as a self-contained HTML page (the audit part of report.html) to this file")
	fl.Float64Var(&cfg.TargetEpsilon, "target-epsilon", 0, "the embeddings' per-node ε target the run was given, to judge the claims against (0: none)")
	fl.Float64Var(&cfg.BudgetEpsilon, "budget-epsilon", 0, "the per-client ε budget the run was given, to judge the claims against (0: none)")
	fl.StringVar(&cfg.ExpectHeads, "expect-heads", "", "the aggregator's JSON report (or a JSON list of heads): check every chain reaches the final head it lists (catches a ledger cut back consistently)")
	return cmd
}
