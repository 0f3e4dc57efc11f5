package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/privacy"
	"graphfed/runreport"
	"graphfed/scenarios"
	"graphfed/workload/aml"
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
	f.IntVar(&a.banks, "banks", 24, "AML world: banks (one client each). With many banks a bank sees little of a foreign account's activity, which is what CE-FedGNN's exchange adds")
	f.StringVar(&a.size, "size", "demo", "AML world size: demo (30k accounts, 300k rows, 1 in 100 laundering), tiny, small or medium")
	f.IntVar(&a.worldRows, "world-rows", 0, "AML world: transactions (0: the size's default)")
	f.StringVar(&a.kind, "gnn", "gin", "AML message passing: gin, sage or gcn")
	f.IntVar(&a.batch, "batch", 512, "AML: seed transactions per local step")
	f.IntVar(&a.accounts, "world-accounts", 0, "AML world: accounts (0: the size's default)")
	f.Float64Var(&a.ratio, "illicit-ratio", 0, "AML world: share of laundering transactions (0: the HI preset's 1/900)")
	f.IntVar(&a.hidden, "aml-hidden", 32, "AML: hidden units of the transaction GNN")
	f.Float64Var(&a.lr, "aml-lr", 5e-3, "AML: Adam learning rate")
	f.IntSliceVar(&a.fanOut, "fanout", []int{5, 5}, "AML: neighbours sampled per node at each layer")
	f.IntVar(&a.embEvery, "emb-every", 0, "AML (cefedgnn, fedgnn-st): banks release boundary embeddings every this many rounds; fewer releases allow less noise for the same ε. 0: every round for hidden layers, 3 releases over the job for --emb-release features")
	f.StringVar(&a.embRelease, "emb-release", agent.DefaultAMLRelease, "AML (cefedgnn, fedgnn-st): what a boundary account's release carries: hidden (its per-layer estimates), features (layer 0: its structural features as its own bank computes them from all its transactions) or all (both)")
	f.IntVar(&a.embDims, "emb-dims", 0, "AML (cefedgnn, fedgnn-st): release this many coordinates of each layer's boundary estimate (its projection on a basis all banks derive alike) instead of all --aml-hidden; fewer coordinates keep more signal under the same noise. 0: all")
	f.Float64Var(&a.poolWeight, "emb-pool-weight", agent.DefaultAMLPoolWeight, "AML (cefedgnn, fedgnn-st): least weight of a foreign account's newest release in the running mean of its releases a bank reads (the n-th enters with max(1/n, this)); 1 reads the latest release only")
	f.StringVar(&a.trans, "trans", "", "AML: run on this AMLworld *_Trans.csv (generated or downloaded) instead of generating a world; the banks are the file's")
	f.StringVar(&a.acctFile, "accounts", "", "AML (--trans): the world's accounts file (default: <name>_accounts.csv beside --trans, if present)")
	f.StringVar(&a.opt, "aml-opt", "", "AML: optimizer, adam or cefed (Algorithm 1: G ← (1−β)G + β∇, W ← W − ηG, sharing G under cefedgnn and fedgnn-st); default adam")
	f.Float64Var(&a.posFrac, "pos-fraction", agent.DefaultAMLPosFraction, "AML: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision (negative: uniform batches)")
	f.IntVar(&a.evalSample, "eval-sample", agent.DefaultAMLEvalSample, "AML: per-round evaluation scores every laundering transaction and at most this many legitimate ones per bank and split, weighted back to the split (negative: all); the final model is scored on everything")
	a.multi.register(f, "AML: ", federatedNote)
	f.IntVar(&a.evalEvery, "eval-every", 1, "AML: banks score the model every this many rounds (the final model always)")
}

// runAMLSim generates an AML world (or loads --trans), splits it into bank
// views on the generated worlds' temporal split, gives each bank an agent
// and runs the job: the main job of `make demo`.
func runAMLSim(cmd *cobra.Command, g *globalFlags, s simFlags, start time.Time) error {
	log := g.logger()
	fl := cmd.Flags()
	if !fl.Changed("algo") {
		s.algo = amlDefaultAlgo
	}
	if !fl.Changed("rounds") {
		s.rounds = amlDefaultRounds
	}
	priv, err := s.priv.sim(cmd, s.seed, s.out)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	w, accts, dataset, transPath, cleanup, err := s.aml.world(cmd, g, s.seed, s.out)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	defer cleanup()
	// Typologies are evaluation labels, like the laundering flag: banks
	// count recall by typology, the simulation pools it.
	attempts, err := aml.LoadPatternsBeside(transPath)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	views, err := aml.SplitBanks(w, accts)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	worldRows, worldAccounts := w.NumEdges(), w.NumAccounts()
	w = nil // from here on only the banks' views are used (and kept in memory)
	fp := newFinalProgress(views)
	// The banks share GOMAXPROCS sets of model work buffers: they train in
	// parallel on every core without holding a set each.
	work := gnn.NewEdgeWorkers(0)
	learners := make([]agent.Learner, len(views))
	ids := make([]string, len(views))
	trainSizes := make([]int, len(views))
	if s.aml.embEvery == 0 {
		s.aml.embEvery = agent.DefaultExchangeEvery(s.aml.embRelease, s.rounds)
	}
	for i, v := range views {
		d, err := scenarios.AMLData(v)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		if attempts != nil {
			d.Typology, _ = aml.MatchTypologies(v.Graph, attempts)
		}
		v.Graph.Compact() // built: trim its arrays, drop its account lookup
		l, err := agent.NewAMLLearner(d, deploy.AMLConfigFor(s.algo, agent.AMLConfig{Kind: s.aml.kind, Opt: s.aml.opt, BatchSize: s.aml.batch,
			Gamma: s.cefed.Gamma, Hidden: s.aml.hidden, LR: s.aml.lr, FanOut: s.aml.fanOut, ExchangeEvery: s.aml.embEvery, PoolWeight: s.aml.poolWeight, ReleaseDims: s.aml.embDims, Release: s.aml.embRelease,
			EvalSample: s.aml.evalSample, PosFraction: s.aml.posFrac, OnFinalScore: fp.bank(i),
			Ports: s.aml.multi.ports(), TimeDeltas: s.aml.multi.timeDeltas(), EgoIDs: s.aml.multi.egoIDs(), Work: work, Seed: s.seed*7919 + uint64(i) + 1}))
		if err != nil {
			return fmt.Errorf("sim: bank %s: %w", v.ID, err)
		}
		learners[i], ids[i] = l, v.ID
		trainSizes[i] = l.TrainSize()
	}
	if !fl.Changed("local-epochs") {
		// Rounds that fit the work: K grows with the banks' data.
		s.localEpochs = deploy.AMLLocalSteps(trainSizes, s.aml.batch, s.rounds)
		setEffective(fl, "local-epochs", s.localEpochs)
		log.Info().Int("k", s.localEpochs).Ints("train_rows", trainSizes).Int("batch", s.aml.batch).Int("rounds", s.rounds).
			Msg("sim: local steps per round from the banks' training transactions")
	}
	priv.EmbSigma = s.embSigma
	if s.priv.target > 0 {
		priv.NodeTarget, priv.EmbReleases = s.priv.target, privacy.PlannedReleases(s.rounds, s.aml.embEvery)
		if err := printNodeTarget(g.humanOut(), priv); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	slow, err := s.async.slowFactors(len(views))
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	log.Info().Int("banks", len(views)).Int("rows", worldRows).Int("accounts", worldAccounts).Msg("AML world ready")
	var rows []roundRow
	p := newProgress("sim aml "+s.algo, s.rounds)
	sc := s.simConfig(deploy.TaskAML, log, priv)
	sc.Learners, sc.IDs, sc.EvalEvery, sc.SlowFactor = learners, ids, s.aml.evalEvery, slow
	if sc.InProcess, err = inProcessConns(s.conns, s.natsURL, len(learners)+2, log); err != nil {
		return err
	}
	sc.OnRound = func(rc aggregator.RoundClosed, scores map[string]map[string]float64) {
		f1 := math.NaN() // not scored this round (--eval-every)
		if len(scores) > 0 {
			f1, _, _ = pooledF1(scores, "val_")
		}
		rows = append(rows, roundRow{rc: rc, acc: f1})
	}
	sc.OnProgress = func(rc aggregator.RoundClosed, pr scenarios.Progress) {
		r := &rows[len(rows)-1]
		r.prog = pr
		p.update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d val_f1(start)=%.4f %s %s",
			rc.Reason, len(rc.In), len(rc.Late), r.acc, humanBytes(pr.Bytes), progressClaims(pr.NodeEpsilonP90, pr.ClientEpsilon, priv)))
	}
	res, err := scenarios.RunSim(cmd.Context(), sc)
	p.finish()
	fp.finish()
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	f1, prec, rec := pooledF1(res.Agg.Final, "test_")
	vf1, _, _ := pooledF1(res.Agg.Final, "val_")
	tf1, _, _ := pooledF1(res.Agg.Final, "test_tuned_")
	byTyp := typologyRecall(res.Agg.Final)
	rep := Report{
		Command: "sim", Algo: s.algo, Dataset: dataset, Clients: len(views), Rounds: int(res.Agg.Rounds), Seed: int64(s.seed),
		Metrics: map[string]any{"test_f1_illicit": f1, "test_precision_illicit": prec, "test_recall_illicit": rec,
			"val_f1_illicit": vf1, "test_f1_illicit_tuned": tf1, "rows": worldRows, "gnn": s.aml.kind, "k": s.localEpochs, "rejects": res.Agg.Rejects,
			"peak_rss_mib": peakRSSMiB()},
		Comm:    &CommReport{Bytes: res.Bytes, Messages: res.Messages},
		Privacy: privacyReport(res.Agg.Final, res.Ledger, priv),
	}
	putRobust(rep.Metrics, sc.Robust, res.Agg)
	if err := putOperatingPoint(rep.Metrics, res.Agg.Final); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if byTyp != nil {
		rep.Metrics["test_recall_by_typology"] = byTyp
		if err := writeTypologyTable(g.humanOut(), byTyp); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	if s.out != "" {
		if err := writeAMLRun(cmd, s.out, simRun{rep: rep, rows: rows, res: res, priv: priv, start: start}); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return g.emit(rep, start)
}

// world returns the transactions the job runs on, the world's accounts
// (nil when there is no accounts file), the report's dataset name and a
// cleanup: the --trans file with its accounts, or else a world generated
// from the flags into out/world (a temporary directory without --out).
func (a *amlFlags) world(cmd *cobra.Command, g *globalFlags, seed uint64, out string) (w *graph.AMLGraph, accts []graph.AMLAccount, dataset, trans string, cleanup func(), err error) {
	nop := func() {}
	if a.trans != "" {
		w, accts, err := a.load(cmd, g)
		return w, accts, a.trans, a.trans, nop, err
	}
	if cmd.Flags().Changed("accounts") {
		return nil, nil, "", "", nop, fmt.Errorf("--accounts needs --trans")
	}
	size, err := aml.ParseSize(a.size)
	if err != nil {
		return nil, nil, "", "", nop, err
	}
	wcfg, err := aml.Preset(size, aml.HI, seed)
	if err != nil {
		return nil, nil, "", "", nop, err
	}
	wcfg.Banks = a.banks
	if a.worldRows > 0 {
		wcfg.Transactions = int64(a.worldRows)
	}
	if a.accounts > 0 {
		wcfg.Accounts = a.accounts
	}
	if a.ratio > 0 {
		wcfg.IllicitRatio = a.ratio
	}
	dir := filepath.Join(out, "world")
	cleanup = nop
	if out == "" {
		if dir, err = os.MkdirTemp("", "graphfed-aml-"); err != nil {
			return nil, nil, "", "", nop, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	gp := newProgress("gen aml", int(wcfg.Transactions))
	sum, err := aml.Generate(wcfg, dir, func(done, total int64) { gp.update(int(done), "rows") })
	gp.finish()
	if err != nil {
		cleanup()
		return nil, nil, "", "", nop, err
	}
	if w, _, err = graph.LoadAMLTrans(sum.TransPath, graph.AMLOptions{}); err != nil {
		cleanup()
		return nil, nil, "", "", nop, err
	}
	return w, nil, "aml-" + a.size, sum.TransPath, cleanup, nil
}

// load reads the --trans file and its accounts. The world's shape comes
// from the file, so the flags that shape a generated world are refused
// rather than silently ignored. Malformed rows fail the run with their line
// (graph's strict policy): a model trained on a silently thinned file would
// not be the file's.
func (a *amlFlags) load(cmd *cobra.Command, g *globalFlags) (*graph.AMLGraph, []graph.AMLAccount, error) {
	for _, name := range []string{"banks", "size", "world-rows", "world-accounts", "illicit-ratio"} {
		if cmd.Flags().Changed(name) {
			return nil, nil, fmt.Errorf("--%s shapes a generated world; with --trans the world is the file's", name)
		}
	}
	st, err := os.Stat(a.trans)
	if err != nil {
		return nil, nil, fmt.Errorf("--trans: %w", err)
	}
	lp := newProgress("load "+filepath.Base(a.trans), int(st.Size()))
	w, iss, err := graph.LoadAMLTrans(a.trans, graph.AMLOptions{Progress: func(done, _ int64) { lp.update(int(done), "bytes") }})
	lp.finish()
	if err != nil {
		return nil, nil, fmt.Errorf("--trans: %w", err)
	}
	logIssues(g, iss)
	if w.NumEdges() == 0 {
		return nil, nil, fmt.Errorf("--trans %s: no transactions", a.trans)
	}
	if w.NumBanks() < 2 {
		return nil, nil, fmt.Errorf("--trans %s: %d bank, a federated job needs at least 2", a.trans, w.NumBanks())
	}
	path := a.acctFile
	if path == "" {
		sib, err := graph.AMLSiblingPath(a.trans, "accounts")
		if err != nil {
			return w, nil, nil // a file named otherwise has no siblings
		}
		if _, err := os.Stat(sib); errors.Is(err, fs.ErrNotExist) {
			return w, nil, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("--accounts: %w", err)
		}
		path = sib
	}
	accts, iss, err := graph.LoadAMLAccounts(path, graph.AMLOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("--accounts: %w", err)
	}
	logIssues(g, iss)
	return w, accts, nil
}

// writeAMLRun writes the run directory (writeSimRun) and the F1 plot.
func writeAMLRun(cmd *cobra.Command, dir string, r simRun) error {
	r.metric = "val_f1_illicit"
	r.clientScore = func(sc map[string]float64) float64 {
		if sc == nil || sc["val_tp"]+sc["val_fp"]+sc["val_fn"] == 0 {
			return math.NaN()
		}
		f1, _, _ := pooledF1(map[string]map[string]float64{"": sc}, "val_")
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
func printNodeTarget(w io.Writer, p scenarios.SimPrivacy) error {
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
