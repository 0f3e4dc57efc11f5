package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/aml/eval"
	"graphfed/deploy"
	"graphfed/job"
	"graphfed/privacy"
	"graphfed/runreport"
)

// amlFlags are sim's settings for --scenario aml.
type amlFlags struct {
	banks      int
	size       string
	kind       string
	batch      int
	gamma      float64
	worldRows  int
	accounts   int
	ratio      float64
	hidden     int
	lr         float64
	fanOut     []int
	evalEvery  int
	embEvery   int
	poolWeight float64
	embDims    int
	embRelease string
	opt        string // optimizer: "" (the algorithm's), adam or cefed
	evalSample int
	posFrac    float64
	trans      string // an AMLworld *_Trans.csv to run on instead of generating a world
	acctFile   string // its accounts file (default: the sibling of trans, if present)
	multi      multiGNNFlags
}

// AML defaults of flags shared with node simulations: the main job runs
// CE-FedGNN, exchanging every K = 32 local steps.
const (
	amlDefaultAlgo   = aggregator.AlgoCEFedGNN
	amlDefaultRounds = 12
	amlDefaultK      = deploy.DefaultAMLLocalSteps // bigger banks get more: deploy.AMLLocalSteps
)

func (a *amlFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&a.banks, "banks", 0, fmt.Sprintf("AML world: banks (one client each; 0: %d). With many banks a bank sees little of a foreign account's activity, which is what CE-FedGNN's exchange adds", job.DefaultAMLBanks))
	f.StringVar(&a.size, "size", "", "AML world size: demo (the default: 30k accounts, 300k rows, 1 in 100 laundering), tiny, small or medium")
	f.IntVar(&a.worldRows, "world-rows", 0, "AML world: transactions (0: the size's default)")
	f.StringVar(&a.kind, "gnn", "gin", "AML message passing: gin, sage or gcn")
	f.IntVar(&a.batch, "batch", 512, "AML: seed transactions per local step")
	f.IntVar(&a.accounts, "world-accounts", 0, "AML world: accounts (0: the size's default)")
	f.Float64Var(&a.ratio, "illicit-ratio", 0, "AML world: share of laundering transactions (0: the HI preset's 1/900)")
	f.IntVar(&a.hidden, "aml-hidden", 32, "AML: hidden units of the transaction GNN")
	f.Float64Var(&a.lr, "aml-lr", 5e-3, "AML: Adam learning rate")
	f.IntSliceVar(&a.fanOut, "fanout", []int{5, 5}, "AML: neighbours sampled per node at each layer")
	f.IntVar(&a.embEvery, "emb-every", 0, "AML (cefedgnn, fedgnn-st): banks release boundary embeddings every this many rounds; fewer releases allow less noise for the same ε. 0: every round for hidden layers, 3 releases over the job for --emb-release features")
	f.StringVar(&a.embRelease, "emb-release", amllearner.DefaultRelease, "AML (cefedgnn, fedgnn-st): what a boundary account's release carries: hidden (its per-layer estimates), features (layer 0: its structural features as its own bank computes them from all its transactions) or all (both)")
	f.IntVar(&a.embDims, "emb-dims", 0, "AML (cefedgnn, fedgnn-st): release this many coordinates of each layer's boundary estimate (its projection on a basis all banks derive alike) instead of all --aml-hidden; fewer coordinates keep more signal under the same noise. 0: all")
	f.Float64Var(&a.poolWeight, "emb-pool-weight", amllearner.DefaultPoolWeight, "AML (cefedgnn, fedgnn-st): least weight of a foreign account's newest release in the running mean of its releases a bank reads (the n-th enters with max(1/n, this)); 1 reads the latest release only")
	f.StringVar(&a.trans, "trans", "", "AML: run on this AMLworld *_Trans.csv (generated or downloaded) instead of generating a world; the banks are the file's")
	f.StringVar(&a.acctFile, "accounts", "", "AML (--trans): the world's accounts file (default: <name>_accounts.csv beside --trans, if present)")
	f.StringVar(&a.opt, "aml-opt", "", "AML: optimizer, adam or cefed (Algorithm 1: G ← (1−β)G + β∇, W ← W − ηG, sharing G under cefedgnn and fedgnn-st); default adam")
	f.Float64Var(&a.posFrac, "pos-fraction", amllearner.DefaultPosFraction, "AML: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision (negative: uniform batches)")
	f.IntVar(&a.evalSample, "eval-sample", amllearner.DefaultEvalSample, "AML: per-round evaluation scores every laundering transaction and at most this many legitimate ones per bank and split, weighted back to the split (negative: all); the final model is scored on everything")
	a.multi.register(f, "AML: ", federatedNote)
	f.IntVar(&a.evalEvery, "eval-every", 1, "AML: banks score the model every this many rounds (the final model always)")
}

// runAMLSim binds the flags into a job.AMLSpec, runs it (job.RunAML: the
// main job of `make demo`) and reports it.
func runAMLSim(cmd *cobra.Command, g *globalFlags, s simFlags, start time.Time) error {
	log := g.logger()
	spec, err := s.amlSpec(cmd, log)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	var p *progress
	var planned job.SimPrivacy
	spec.OnPlan = func(plan job.AMLPlan) {
		planned = plan.Privacy
		s.algo, s.rounds, s.localEpochs = plan.Algo, plan.Rounds, plan.LocalSteps
		setEffective(cmd.Flags(), "local-epochs", plan.LocalSteps)
		if plan.Privacy.NodeTarget > 0 {
			if err := printNodeTarget(g.humanOut(), plan.Privacy); err != nil {
				log.Warn().Err(err).Msg("sim: the node target's plan")
			}
		}
		p = newProgress("sim aml "+plan.Algo, plan.Rounds)
	}
	var rows []roundRow
	res, err := job.RunAML(cmd.Context(), spec, func(r job.AMLRound) {
		rows = append(rows, roundRow{rc: r.Close, acc: r.ValF1, prog: r.Progress})
		p.update(int(r.Close.Round), fmt.Sprintf("%s in=%d late=%d val_f1(start)=%.4f %s %s",
			r.Close.Reason, len(r.Close.In), len(r.Close.Late), r.ValF1, humanBytes(r.Progress.Bytes),
			progressClaims(r.Progress.NodeEpsilonP90, r.Progress.ClientEpsilon, planned)))
	})
	if p != nil {
		p.finish()
	}
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	sc, priv := res.Scores, res.Plan.Privacy
	rep := Report{
		Command: "sim", Algo: res.Plan.Algo, Dataset: res.Dataset, Clients: res.Plan.Banks, Rounds: int(res.Sim.Agg.Rounds), Seed: int64(s.seed),
		Metrics: map[string]any{"test_f1_illicit": sc.TestF1, "test_precision_illicit": sc.TestPrecision, "test_recall_illicit": sc.TestRecall,
			"val_f1_illicit": sc.ValF1, "test_f1_illicit_tuned": sc.TunedF1, "rows": res.Plan.Rows, "gnn": res.Plan.Learner.Kind,
			"k": res.Plan.LocalSteps, "rejects": res.Sim.Agg.Rejects, "peak_rss_mib": runreport.PeakRSSMiB()},
		Comm:    &CommReport{Bytes: res.Sim.Bytes, Messages: res.Sim.Messages},
		Privacy: privacyReport(res.Sim.Agg.Final, res.Sim.Ledger, priv),
	}
	putRobust(rep.Metrics, spec.Sim.Robust, res.Sim.Agg)
	putPooled(rep.Metrics, sc)
	if sc.Typology != nil {
		rep.Metrics["test_recall_by_typology"] = sc.Typology
		if err := eval.WriteTypologyTable(g.humanOut(), sc.Typology); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	if s.out != "" {
		run := simRun{rep: rep, rows: rows, res: res.Sim, priv: priv, start: start}
		if err := writeAMLRun(cmd, s.out, run); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return g.emit(rep, start)
}

// amlSpec binds sim's flags into the AML job's spec. Unset fields (the
// algorithm and rounds when not given, K when --local-epochs is not
// given) are left for the library to resolve.
func (s simFlags) amlSpec(cmd *cobra.Command, log zerolog.Logger) (job.AMLSpec, error) {
	fl := cmd.Flags()
	sc := s.simConfig(deploy.TaskAML, log, job.SimPrivacy{})
	if !fl.Changed("algo") {
		sc.Algo = ""
	}
	if !fl.Changed("rounds") {
		sc.Rounds = 0
	}
	if !fl.Changed("local-epochs") {
		sc.LocalEpochs = 0
	}
	a := s.aml
	spec := job.AMLSpec{Sim: sc, Conns: s.conns, Out: s.out, EvalEvery: a.evalEvery, Progress: cmdProgress{},
		World: job.AMLWorld{Trans: a.trans, Accounts: a.acctFile, Size: a.size, Banks: a.banks, Rows: a.worldRows,
			NumAccounts: a.accounts, IllicitRatio: a.ratio},
		Learner: amllearner.Config{Kind: a.kind, Opt: a.opt, BatchSize: a.batch, Gamma: s.cefed.Gamma, Hidden: a.hidden, LR: a.lr,
			FanOut: a.fanOut, ExchangeEvery: a.embEvery, PoolWeight: a.poolWeight, ReleaseDims: a.embDims, Release: a.embRelease,
			EvalSample: a.evalSample, PosFraction: a.posFrac,
			Ports: a.multi.ports(), TimeDeltas: a.multi.timeDeltas(), EgoIDs: a.multi.egoIDs()}}
	// The node target as the flags decided it (privacyFlags.resolve): a
	// fixed σ0 only without one.
	target := s.priv.target
	spec.Privacy = job.Privacy{Delta: s.priv.delta, BudgetEpsilon: s.priv.budgetEps, Accountant: s.priv.accountant,
		NodeTarget: &target, ModelSigma: s.priv.modelSigma, ModelClip: s.priv.modelClip}
	if target <= 0 {
		spec.Privacy.EmbSigma = s.embSigma
	}
	if fl.Changed("seed") {
		seed := s.seed
		spec.Privacy.NoiseSeed = &seed
	}
	slow, err := s.async.slowFactors(math.MaxInt) // the library checks them against the banks
	if err != nil {
		return spec, err
	}
	spec.SlowFactor = slow
	return spec, nil
}

// writeAMLRun writes the run directory (writeSimRun) and the F1 plot.
func writeAMLRun(cmd *cobra.Command, dir string, r simRun) error {
	r.metric = "val_f1_illicit"
	r.clientScore = func(sc map[string]float64) float64 {
		if sc == nil || sc["val_tp"]+sc["val_fp"]+sc["val_fn"] == 0 {
			return math.NaN()
		}
		f1, _, _ := eval.PooledF1(map[string]map[string]float64{"": sc}, "val_")
		return f1
	}
	if err := writeSimRun(cmd, dir, r); err != nil {
		return err
	}
	var xs, ys []float64
	for _, row := range r.rows {
		if !math.IsNaN(row.acc) {
			xs, ys = append(xs, float64(row.rc.Round)), append(ys, row.acc)
		}
	}
	return runreport.WriteLinePNG(filepath.Join(dir, "f1.png"), "laundering-class F1 (validation, model at round start)", "F1 (pooled over banks)",
		[]runreport.Series{{Name: r.rep.Algo, X: xs, Y: ys}})
}

// printNodeTarget states the node target and the σ0 it implies before the
// run: σ0 depends on ρ_p90, which each bank measures on the embeddings of
// each exchange before releasing them (privacy/target.go).
func printNodeTarget(w io.Writer, p job.SimPrivacy) error {
	mu := privacy.MaxMu(p.NodeTarget, p.Delta, p.Accountant)
	var ex []string
	for _, rho := range []float64{0.4, 0.7} {
		s, err := privacy.SigmaForEpsilon(p.NodeTarget, p.Delta, rho, p.EmbReleases, p.Accountant)
		if err != nil {
			return err
		}
		ex = append(ex, fmt.Sprintf("%.3g at ρ=%g", s, rho))
	}
	_, err := fmt.Fprintf(w, "privacy: emb target ε ≤ %g per node at p90 ρ (δ=%g, %s accountant) over %d planned releases: μ* = %.4g, "+
		"σ0 = ρ_p90·sqrt(R)/μ* (%s); each bank derives σ0 before each release from the ρ_p90 it measures and the budget left, and its gate refuses what would overspend. "+
		"model, grad: no target (σ1 = %g)\n", p.NodeTarget, p.Delta, p.Accountant, p.EmbReleases, mu, strings.Join(ex, ", "), pickSigma(p.ModelSigma))
	return err
}

func pickSigma(v float64) float64 {
	if v == 0 {
		return agent.DefaultModelSigma
	}
	return v
}
