package job

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/privacy"
	"graphfed/runreport"
)

// NodeSpec is a node-classification job (`graphfed sim --dataset DIR` or
// `--scenario csbm`), FedGSP's included. Zero fields are unset and take
// the library's defaults.
type NodeSpec struct {
	// Sim is what every simulated job shares; Algo "" is fedavg, Rounds 0
	// DefaultNodeRounds, LocalEpochs 0 the algorithm's
	// (deploy.DefaultLocalEpochs: fedgsp 1, else DefaultNodeLocalEpochs).
	Sim   SimConfig
	Conns string // InProcessConns: auto, tcp or in-process; "": auto
	Data  NodeData
	// Learner is every client's learner options (Node, NodeKind, CEFed,
	// FedGSP); zero: deploy.DefaultLearnerOptions.
	Learner *deploy.LearnerOptions
	// FedGSPServer are the server settings given on top of the preset's
	// row (aggregator.FedGSPPreset of the preset the clients resolve to).
	FedGSPServer aggregator.FedGSPOverrides
	// FedGSPSelect is the federated selection of the default preset.
	FedGSPSelect FedGSPSelect
	Privacy      Privacy
	// Seed, when set, is the job's seed and seeds the noise too
	// (reproducible, marked non-private); nil: seed 1, noise from
	// crypto/rand.
	Seed *uint64
	// SlowFactor slows client i's training by its factor.
	SlowFactor map[int]float64
	Out        string // the run directory; "": none
	// Settings and Changed are the command's settings, for the run
	// directory's summary.
	Settings map[string]string
	Changed  []string
	Progress Progress // nil: none shown
}

// NodeData is where a node job's graph comes from and how it is split.
type NodeData struct {
	Dir       string           // a dataset in the TSV layout, or
	Scenario  string           // "csbm": a generated graph
	CSBM      graph.CSBMConfig // the generated graph; zero: graph.DefaultCSBM
	Split     string           // SplitHelp; "": public
	Clients   int              // 0: DefaultNodeClients
	Partition string           // PartitionMethods; "": louvain
}

// Defaults of a node-classification job.
const (
	DefaultNodeRounds      = 100
	DefaultNodeClients     = 10
	DefaultNodeLocalEpochs = 5
	DefaultNodePartition   = "louvain"
	DefaultNodeSplit       = "public"
)

// NodeResult is a finished node job.
type NodeResult struct {
	Summary runreport.Summary
	Sim     SimResult
}

// seedOf is the job's seed and, when one was given, the noise seed.
func seedOf(p *uint64) (uint64, *uint64) {
	if p == nil {
		return 1, nil
	}
	s := *p
	return s, &s
}

// RunNode loads or generates the graph, partitions it into clients,
// builds every client's learner (deploy.BuildLearner) and runs the job.
func RunNode(ctx context.Context, spec NodeSpec) (NodeResult, error) {
	start := time.Now()
	fail := func(err error) (NodeResult, error) { return NodeResult{}, fmt.Errorf("sim: %w", err) }
	sc, d := resolveSim(spec.Sim), spec.Data
	log, p := sc.Log, progressOr(spec.Progress)
	seed, noise := seedOf(spec.Seed)
	sc.Seed, sc.Task = seed, deploy.TaskNode
	if sc.Algo == "" {
		sc.Algo = aggregator.AlgoFedAvg
	}
	if err := deploy.CheckTaskAlgo(deploy.TaskNode, sc.Algo); err != nil {
		return fail(err)
	}
	if sc.Rounds == 0 {
		sc.Rounds = DefaultNodeRounds
	}
	if sc.LocalEpochs == 0 {
		sc.LocalEpochs = deploy.DefaultLocalEpochs(sc.Algo, DefaultNodeLocalEpochs)
	}
	if d.Clients == 0 {
		d.Clients = DefaultNodeClients
	}
	if d.Partition == "" {
		d.Partition = DefaultNodePartition
	}
	if d.Split == "" {
		d.Split = DefaultNodeSplit
	}
	if d.CSBM == (graph.CSBMConfig{}) {
		d.CSBM = graph.DefaultCSBM()
	}
	priv, err := spec.Privacy.forRun(deploy.TaskNode, sc.Algo, 0, noise, spec.Out)
	if err != nil {
		return fail(err)
	}
	data, name, err := LoadNodeDataset(d.Dir, d.Scenario, d.CSBM, seed)
	if err != nil {
		return fail(err)
	}
	if data, err = ResplitDataset(data, d.Split, seed); err != nil {
		return fail(err)
	}
	clients, err := PartitionDataset(data, d.Clients, d.Partition, seed)
	if err != nil {
		return fail(err)
	}
	lo := deploy.DefaultLearnerOptions()
	if spec.Learner != nil {
		lo = *spec.Learner
	}
	ids := make([]string, len(clients))
	cdata := make([]deploy.Data, len(clients))
	for i, cg := range clients {
		ids[i] = deploy.ClientID(i)
		cdata[i] = deploy.Data{Node: cg, Clients: ids}
	}
	sc.IDs, sc.Node = ids, lo.Node
	ps := graph.PartitionStats(clients)
	log.Info().Str("dataset", name).Int("nodes", data.N()).Int("clients", d.Clients).Str("partition", d.Partition).
		Int("min_nodes", ps.MinNodes).Int("max_nodes", ps.MaxNodes).Float64("cross_share", ps.CrossShare).Msg("partitioned")
	if sc.SlowFactor, err = checkSlow(spec.SlowFactor, len(clients)); err != nil {
		return fail(err)
	}
	if sc.InProcess, err = InProcessConns(spec.Conns, sc.NATSURL, len(clients)+2, log); err != nil {
		return fail(err)
	}
	sc.Privacy = priv
	var gspSel *FedGSPSelection
	var gspPreset string
	if sc.Algo == aggregator.AlgoFedGSP {
		// One preset for every client: by default chosen by the clients'
		// validation scores (resolveFedGSP), never by the data's name. The
		// trials and the job build learners on the same client graphs:
		// each client's descriptors are computed once for all of them.
		lo.FedGSP.Descriptors = fedgsp.NewDescriptorCache()
		trial := func(ctx context.Context, cand fedgsp.Candidate, rounds int) (trialResult, error) {
			return runFedGSPTrial(ctx, sc, lo, spec.FedGSPServer, cdata, cand, rounds, seed, data.ScoreMetric())
		}
		sel := spec.FedGSPSelect
		if sel.RefineRounds == 0 {
			sel.RefineRounds = sc.Rounds
		}
		preset, gc, gsel, err := resolveFedGSP(ctx, lo.FedGSP, sel, data, clients, priv, sc.Job, seed, trial, log)
		if err != nil {
			return fail(err)
		}
		gspSel, gspPreset = gsel, preset
		srv := applyFedGSP(&lo, &sc, preset, gc, spec.FedGSPServer)
		log.Info().Str("preset", preset).Int("orders", gc.Orders).Float64("tau", gc.Tau).Int("hidden", gc.Hidden).Int("layers", gc.Layers).
			Float64("lr", gc.LR1).Float64("coef_lr", gc.LR2).Float64("gamma", srv.Gamma).Float64("alpha", srv.Alpha).Float64("beta", srv.Beta).
			Str("metric", gc.Metric).Msg("fedgsp settings")
	}
	if sc.Learners, err = buildLearners(deploy.TaskNode, sc.Algo, cdata, ids, lo, seed, log); err != nil {
		return fail(err)
	}
	metric := data.ScoreMetric()
	var rows []runreport.Round
	bar := p.Stage("sim "+sc.Algo, sc.Rounds)
	sc.OnRound = func(rc aggregator.RoundClosed, scores map[string]map[string]float64) {
		acc := meanOf(scores, nodeScore)
		rows = append(rows, roundOf(rc, acc))
		bar.Update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d test_%s(start)=%.4f%s", rc.Reason, len(rc.In), len(rc.Late), metric, acc, RoundBudgetNote(rc)))
	}
	sc.OnProgress = func(_ aggregator.RoundClosed, pr deploy.Progress) { withProgress(&rows[len(rows)-1], pr) }
	res, err := RunSim(ctx, sc)
	bar.Finish()
	if err != nil {
		return fail(err)
	}
	// The bar showed each round's scores as far as they had arrived at its
	// close (they travel apart from the updates); the report has them all.
	for i := range rows {
		rows[i].Score = meanOf(res.Agg.PerRound[rows[i].Round], nodeScore)
	}
	final := res.Agg.Final
	acc, n := meanScore(final, "test_acc")
	f1, _ := meanScore(final, "test_macro_f1")
	metrics := map[string]any{
		"test_acc": acc, "test_acc_std": stdScore(final, "test_acc", acc), "test_acc_weighted": weightedScore(final, "test_acc", "test_n"),
		"test_macro_f1": f1, "clients_reporting": n, "partition": d.Partition, "split": d.Split, "rejects": res.Agg.Rejects,
	}
	putClientScores(metrics, metric, final)
	putPooledMacroF1(metrics, final)
	if gspPreset != "" {
		metrics["fedgsp_preset"] = gspPreset
	}
	if gspSel != nil {
		gspSel.DescriptorsComputed = lo.FedGSP.Descriptors.Computed()
		metrics["fedgsp_select"] = gspSel
	}
	putRobust(metrics, sc.Robust, res.Agg)
	putServerOpt(metrics, sc.ServerOpt)
	putLedgerRate(metrics, res.LedgerRate)
	sum := simSummary(sc, name, d.Clients, res, priv, metrics)
	out := NodeResult{Summary: sum, Sim: res}
	if spec.Out != "" {
		files := runFiles(sum, spec.Settings, spec.Changed, start, res, priv, "test_"+metric, rows, nodeScore)
		effective(files.Summary.Settings, sc)
		if err := runreport.WriteRun(ctx, spec.Out, files); err != nil {
			return out, fmt.Errorf("sim: %w", err)
		}
	}
	return out, nil
}

// applyFedGSP sets a FedGSP job's one client configuration (from preset)
// in lo and its server row (preset's, with server on top) in sc, and
// returns the row.
func applyFedGSP(lo *deploy.LearnerOptions, sc *SimConfig, preset string, gc fedgsp.Config, server aggregator.FedGSPOverrides) aggregator.FedGSPConfig {
	srv := aggregator.FedGSPPreset(fedgsp.BaseName(preset))
	server.Apply(&srv)
	lo.FedGSP.Preset, lo.FedGSP.Resolved, sc.FedGSP = preset, &gc, srv
	return srv
}

// runFedGSPTrial runs the job's clients (cdata) as a FedGSP job of rounds
// rounds with cand's settings: the job's own configuration sc and learner
// options lo, under its own job id (so that its releases and ledger are
// its own), with nothing reported or exported.
func runFedGSPTrial(ctx context.Context, sc SimConfig, lo deploy.LearnerOptions, server aggregator.FedGSPOverrides, cdata []deploy.Data,
	cand fedgsp.Candidate, rounds int, seed uint64, metric string) (trialResult, error) {
	gc := cand.Config
	gc.Metric = metric
	if err := gc.Validate(); err != nil {
		return trialResult{}, err
	}
	applyFedGSP(&lo, &sc, cand.Name, gc, server)
	// A job id is [a-z0-9-]: a variant's "+raw" becomes "-raw".
	sc.Job, sc.Rounds = sc.Job+"-select-"+strings.ReplaceAll(cand.Name, "+", "-"), rounds
	sc.OnRound, sc.OnProgress, sc.Metrics = nil, nil, nil
	sc.Privacy.ExportLedger = ""
	sc.Log = sc.Log.Level(max(sc.Log.GetLevel(), zerolog.WarnLevel))
	var err error
	if sc.Learners, err = buildLearners(deploy.TaskNode, sc.Algo, cdata, sc.IDs, lo, seed, sc.Log); err != nil {
		return trialResult{}, err
	}
	res, err := RunSim(ctx, sc)
	if err != nil {
		return trialResult{}, err
	}
	out := trialResult{Final: res.Agg.Final, Late: lateScores(res.Agg.PerRound, rounds), Messages: res.Messages, Bytes: res.Bytes}
	rep, err := privacy.Audit(res.Ledger, privacy.AuditOptions{Kind: sc.Privacy.Accountant, Delta: sc.Privacy.Delta})
	if err != nil {
		return out, fmt.Errorf("audit the trial's ledger: %w", err)
	}
	for _, c := range rep.Clients {
		out.EpsilonClientMax = max(out.EpsilonClientMax, c.Epsilon)
	}
	out.EpsilonChannels = map[string]float64{}
	for ch, e := range rep.ChannelMax {
		out.EpsilonChannels[string(ch)] = e
	}
	return out, nil
}

// lateScores is the weighted validation score of each of a job's last
// lateRounds(rounds) rounds that some client reported scores for, oldest
// first, from the scores the job's aggregator collected by its end. A
// client's scores travel apart from its update, so they may reach the
// aggregator after the round they belong to has closed: read when the job
// is over, not at each close, a trial's late score does not depend on
// which arrived first.
func lateScores(perRound map[uint64]map[string]map[string]float64, rounds int) []float64 {
	var late []float64
	for r := max(1, rounds-lateRounds(rounds)+1); r <= rounds; r++ {
		if v, n := weightedValScore(perRound[uint64(r)], "val_score"); n > 0 {
			late = append(late, v)
		}
	}
	return late
}

// checkSlow checks a job's slow factors against its n clients.
func checkSlow(slow map[int]float64, n int) (map[int]float64, error) {
	for i, f := range slow {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("slow client %d: the job has clients 0..%d", i, n-1)
		}
		if math.IsNaN(f) || f < 1 {
			return nil, fmt.Errorf("slow client %d: factor %v, want at least 1", i, f)
		}
	}
	return slow, nil
}

// FedGSPPresets names the FedGSP presets (fedgsp.Preset, and the server
// rows aggregator.FedGSPPreset beside them).
func FedGSPPresets() []string { return fedgsp.PresetNames() }

// DefaultFedGSPClient is the FedGSP client's default settings (Cora's row).
func DefaultFedGSPClient() fedgsp.Config { return fedgsp.DefaultConfig() }

// FedGSPServer is the aggregator's FedGSP configuration: preset's server
// row (aggregator.FedGSPPreset) with the given fields on top.
func FedGSPServer(preset string, set aggregator.FedGSPOverrides) (aggregator.FedGSPConfig, error) {
	if _, ok := fedgsp.Preset(preset); !ok {
		return aggregator.FedGSPConfig{}, fmt.Errorf("unknown --fedgsp-preset %q (want %s, or a row's %s/%s variant)", preset, strings.Join(fedgsp.PresetNames(), ", "), fedgsp.RawSuffix, fedgsp.SlowSuffix)
	}
	c := aggregator.FedGSPPreset(fedgsp.BaseName(preset)) // a variant keeps its row's server settings
	set.Apply(&c)
	return c, nil
}
