package main

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/deploy"
	"graphfed/job"
	"graphfed/privacy"
	"graphfed/runreport"
)

// privacyFlags are the gate settings shared by sim and agent.
type privacyFlags struct {
	delta, budgetEps, modelSigma, modelClip float64
	accountant                              string
	// targetEps is --target-epsilon as given; target the effective node
	// target after resolve (0: none).
	targetEps, target float64
}

func (p *privacyFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&p.delta, "delta", 1e-4, "privacy δ")
	f.Float64Var(&p.budgetEps, "budget-eps", 0, "per-client ε budget for model updates; 0: none")
	f.Float64Var(&p.modelSigma, "model-sigma", agent.DefaultModelSigma, "Gaussian noise σ1 on model updates")
	f.Float64Var(&p.modelClip, "model-clip", agent.DefaultModelClip, "L2 clip norm of released model parameters (a binding clip is logged)")
	f.StringVar(&p.accountant, "accountant", "rdp", "privacy accountant: rdp or exact (exact by default under --target-epsilon)")
	f.Float64Var(&p.targetEps, "target-epsilon", deploy.DefaultAMLNodeTarget, "aml with cefedgnn or fedgnn-st: per-node ε target for boundary embeddings at the 90th-percentile metric distance ρ "+
		"(δ = --delta, exact accountant, over the run's planned releases); σ0 is derived from it and the gate refuses releases that would overspend. "+
		"0 or negative: no target, σ0 from --emb-sigma (the default when --emb-sigma is given)")
	// Bad settings fail before any data is loaded or any server started.
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if err := p.resolve(cmd); err != nil {
			return fmt.Errorf("%s: %w", cmd.Name(), err)
		}
		if err := p.validate(cmd); err != nil {
			return fmt.Errorf("%s: %w", cmd.Name(), err)
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// resolve decides the node target: --target-epsilon for an AML job whose
// algorithm exchanges embeddings, unless --emb-sigma was chosen instead;
// under a target the accountant is exact unless --accountant says
// otherwise.
func (p *privacyFlags) resolve(cmd *cobra.Command) error {
	fl := cmd.Flags()
	p.target = 0
	algo, _ := fl.GetString("algo")
	task := simTask(cmd)
	if task == deploy.TaskAML && !fl.Changed("algo") {
		algo = amlDefaultAlgo
	}
	if algo == "" {
		algo = deploy.DefaultAlgo(task)
	}
	set := fl.Changed("target-epsilon")
	switch {
	case task != deploy.TaskAML || !deploy.ExchangesEmbeddings(algo):
		if set && p.targetEps > 0 {
			return fmt.Errorf("--target-epsilon applies to AML jobs with cefedgnn or fedgnn-st (embedding releases), not %s/%s", task, algo)
		}
		return nil
	case math.IsNaN(p.targetEps) || math.IsInf(p.targetEps, 0):
		return fmt.Errorf("--target-epsilon is %v; want a finite number (0: none)", p.targetEps)
	case fl.Changed("emb-sigma") && set && p.targetEps > 0:
		return fmt.Errorf("--emb-sigma and --target-epsilon %g both choose σ0: give one (--target-epsilon 0 for a fixed σ0)", p.targetEps)
	case fl.Changed("emb-sigma") && !set:
		return nil // an explicit σ0 instead of the default target
	}
	p.target = max(p.targetEps, 0)
	if p.target > 0 && !fl.Changed("accountant") {
		p.accountant = privacy.Exact.String()
	}
	return nil
}

// options turns the flags into deploy's privacy options; σ0 comes from
// --emb-sigma where the command has it.
func (p *privacyFlags) options(cmd *cobra.Command) deploy.PrivacyOptions {
	o := deploy.DefaultPrivacy()
	o.Delta, o.BudgetEpsilon, o.Accountant = p.delta, p.budgetEps, p.accountant
	o.ModelSigma, o.ModelClip = p.modelSigma, p.modelClip
	if v, err := cmd.Flags().GetFloat64("emb-sigma"); err == nil {
		o.EmbSigma = v
	}
	if v, err := cmd.Flags().GetFloat64("grad-sigma"); err == nil {
		o.GradSigma = v
	}
	if v, err := cmd.Flags().GetFloat64("desc-sigma"); err == nil {
		o.DescriptorSigma = v
	}
	return o
}

// validate checks the privacy flags (σ and clips positive, δ in (0, 1), a
// known accountant) and, on a command with --algo, that the task has that
// algorithm.
func (p *privacyFlags) validate(cmd *cobra.Command) error {
	if err := p.options(cmd).Validate(); err != nil {
		return err
	}
	algo, err := cmd.Flags().GetString("algo")
	if err != nil {
		return nil // no --algo: the agent's algorithm is the aggregator's
	}
	task := simTask(cmd)
	if task == deploy.TaskAML && !cmd.Flags().Changed("algo") {
		algo = amlDefaultAlgo
	}
	if algo == "" {
		algo = deploy.DefaultAlgo(task) // agent: the task's
	}
	return deploy.CheckTaskAlgo(task, algo)
}

// simTask is the task a command runs: its --task where it has one (agent,
// aggregator); for `graphfed sim` aml with --scenario aml, recommendation
// with --lightgcn, node classification otherwise.
func simTask(cmd *cobra.Command) string {
	if t, err := cmd.Flags().GetString("task"); err == nil && t != "" {
		return t
	}
	if sc, _ := cmd.Flags().GetString("scenario"); sc == "aml" {
		return deploy.TaskAML
	}
	if dir, _ := cmd.Flags().GetString("lightgcn"); dir != "" {
		return deploy.TaskRec
	}
	return deploy.TaskNode
}

// sim turns the flags into the simulation's gate settings. Noise is seeded
// (reproducible, marked non-private in the ledger) only when --seed was
// given explicitly; otherwise it comes from crypto/rand.
func (p *privacyFlags) sim(cmd *cobra.Command, seed uint64, out string) (job.SimPrivacy, error) {
	kind, err := privacy.ParseAccountantKind(p.accountant)
	if err != nil {
		return job.SimPrivacy{}, err
	}
	sp := job.SimPrivacy{Delta: p.delta, Budget: privacy.Budget{Epsilon: p.budgetEps}, Accountant: kind,
		ModelSigma: p.modelSigma, ModelClip: p.modelClip}
	if cmd.Flags().Changed("seed") {
		sp.NoiseSeed = &seed
	}
	if out != "" {
		sp.ExportLedger = filepath.Join(out, "ledger.jsonl")
	}
	return sp, nil
}

// privacyReport summarises what the agents reported spending and what the
// ledger holds, for the JSON report.
func privacyReport(final map[string]map[string]float64, ledger []privacy.Entry, p job.SimPrivacy) map[string]any {
	worst := 0.0
	for _, sc := range final {
		if e := sc["privacy_epsilon_client"]; !math.IsNaN(e) && e > worst {
			worst = e
		}
	}
	seeded := false
	records := 0
	for _, e := range ledger {
		seeded = seeded || e.Seeded
		if e.Channel.IsRecord() {
			records++
		}
	}
	// ledger_entries counts the banks' entries (releases and
	// calibrations), as before the aggregator kept its records there.
	out := map[string]any{
		"delta": p.Delta, "accountant": p.Accountant.String(), "epsilon_client_max": worst,
		"ledger_entries": len(ledger) - records, "ledger_records": records, "seeded_noise": seeded,
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
		out["channels"], out["dp_channels"], out["no_dp_channels"] = runreport.ClaimsMap(runreport.Claims(rep, claimParams(p)))
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
