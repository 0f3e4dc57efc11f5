package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/cefedgnn"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/job"
	"graphfed/learner"
	"graphfed/learner/node"
	"graphfed/seeds"
	"graphfed/telemetry"
)

type simFlags struct {
	dir, scenario, algo, partition, natsURL, out, job string
	conns                                             string
	split                                             string
	clients, rounds, localEpochs, quorum              int
	seed                                              uint64
	csbm                                              csbmFlags
	roundTimeout, deadlineCap                         time.Duration
	deadlineFactor                                    float64
	staleness                                         string
	staleFactor, staleA                               float64
	robust                                            robustFlags
	node                                              node.Config
	priv                                              privacyFlags
	learner                                           string
	embSigma                                          float64
	cefed                                             cefedgnn.Config
	aml                                               amlFlags
	async                                             asyncFlags
	lpsfed                                            lpsfedFlags
	fedgsp                                            fedgspFlags
	durable, secure                                   bool
	metrics                                           metricsFlags
	live                                              *telemetry.Metrics // served at --metrics-addr
}

func newSimCmd(g *globalFlags) *cobra.Command {
	s := simFlags{node: node.DefaultConfig()}
	var mem *memoryLimit
	cmd := &cobra.Command{
		Use:   "sim (--dataset DIR | --scenario csbm) --algo ALGO --clients N --partition louvain|random|metis|metis-overlap --rounds R",
		Short: "Run an aggregator and N agents in one process on an embedded (or --nats) server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			mem.defaultFor(simMemoryLimitFor(s.clients))
			if err := mem.apply(cmd, g.logger()); err != nil {
				return err
			}
			live, stopMetrics, err := s.metrics.start(cmd.Context(), g.logger())
			if err != nil {
				return err
			}
			defer stopMetrics()
			s.live = live
			return runSim(cmd, g, s)
		},
	}
	mem = registerMemoryLimit(cmd, simMemoryLimit, "the 5M-row 8-bank AML job then stays under 3 GiB of RSS with room for the GC (a live heap near the limit makes the GC run continuously: raise it for bigger worlds); 480 KiB more per client beyond that, up to 7 GiB, for the many-party jobs")
	f := cmd.Flags()
	f.StringVar(&s.dir, "dataset", "", "dataset directory in the TSV layout")
	f.StringVar(&s.scenario, "scenario", "", "generated world instead of --dataset: aml (multi-bank AML, the main job) or csbm")
	f.StringVar(&s.algo, "algo", "fedavg", "local, fedavg, fedprox, fedper, fedgsp, fedgnn-st or cefedgnn (aml: local, fedavg, fedgnn-st, cefedgnn)")
	f.IntVar(&s.clients, "clients", 10, "number of clients")
	f.StringVar(&s.partition, "partition", "louvain", job.PartitionMethods)
	f.StringVar(&s.split, "split", "public", job.SplitHelp)
	f.IntVar(&s.rounds, "rounds", 100, "federated rounds")
	f.IntVar(&s.localEpochs, "local-epochs", 5, "local steps per round (CE-FedGNN's K; full-batch epochs for node datasets, fedgsp by default 1 as its authors; aml: by default 32, or enough for the job to go twice over the median bank's training transactions)")
	f.Uint64Var(&s.seed, "seed", 1, "seed for data generation, partitioning and model init (simulation only)")
	f.StringVar(&s.natsURL, "nats", "", "external NATS server or cluster URL; default: an embedded server")
	f.StringVar(&s.conns, "conns", "auto", job.ConnsHelp)
	f.BoolVar(&s.durable, "durable", false, "durable aggregator: checkpoints in JetStream KV and object store, updates through the job's update stream")
	f.BoolVar(&s.secure, "secure", false, "fresh keys, keyring and per-party permissions for the job in a temporary directory; every party signs and verifies (not with --nats)")
	f.StringVar(&s.out, "out", "", "run directory for the JSON summary and per-round CSV")
	f.StringVar(&s.job, "job", job.DefaultJobID, "job id")
	f.DurationVar(&s.roundTimeout, "round-timeout", job.DefaultRoundTimeout, "round deadline; with --deadline-factor, its floor")
	registerDeadlineFlags(cmd, &s.deadlineFactor, &s.deadlineCap)
	f.IntVar(&s.quorum, "quorum", 0, "updates that close a round; 0: every live client")
	f.StringVar(&s.staleness, "staleness", "drop", "late updates: drop, constant or polynomial")
	f.Float64Var(&s.staleFactor, "stale-factor", 0.5, "constant staleness weight")
	f.Float64Var(&s.staleA, "stale-a", 0.5, "polynomial staleness exponent a in 1/(1+s)^a")
	s.robust.register(f)
	f.StringVar(&s.node.Model, "model", s.node.Model, "gcn or sage")
	f.IntVar(&s.node.Hidden, "hidden", s.node.Hidden, "hidden units")
	f.Float64Var(&s.node.LR, "lr", s.node.LR, "Adam learning rate")
	f.Float64Var(&s.node.WeightDecay, "weight-decay", s.node.WeightDecay, "L2 weight decay")
	f.Float64Var(&s.node.Dropout, "dropout", s.node.Dropout, "dropout probability")
	f.Float64Var(&s.node.Prox, "mu", deploy.DefaultProx, "FedProx's proximal weight μ (--algo fedprox)")
	s.csbm.register(cmd)
	s.priv.register(cmd)
	s.aml.register(cmd)
	s.lpsfed.register(cmd)
	s.fedgsp.register(cmd)
	s.async.register(cmd)
	s.metrics.register(cmd)
	s.cefed = cefedgnn.DefaultConfig()
	f.StringVar(&s.learner, "learner", "", "node learner: adam (GCN/SAGE with Adam) or cefed (CE-FedGNN's SAGE-mean with moving averages and Eq. 9 updates); default: cefed for cefedgnn and fedgnn-st, adam otherwise")
	f.Float64Var(&s.embSigma, "emb-sigma", agent.DefaultEmbSigma, "σ0 on normalized boundary embeddings (cefedgnn, fedgnn-st)")
	f.Float64Var(&s.cefed.Gamma, "gamma", s.cefed.Gamma, "CE-FedGNN moving-average rate γ of node embeddings")
	f.Float64Var(&s.cefed.Beta, "beta", s.cefed.Beta, "CE-FedGNN moving-average rate β of the gradient estimator")
	f.Float64Var(&s.cefed.LR, "eta", s.cefed.LR, "CE-FedGNN step size η")
	return cmd
}

// nodeLearners builds CE-FedGNN-style learners for every client when
// --learner cefed: the four algorithms then share one code path and differ
// only in what is exchanged (local: nothing; fedavg: W and G; fedgnn-st and
// cefedgnn: W, G and boundary embeddings).
func nodeLearners(s simFlags, clients []*graph.ClientGraph) ([]learner.Learner, []string, error) {
	kind := s.learner
	if kind == "" {
		kind = "adam"
		if deploy.ExchangesEmbeddings(s.algo) {
			kind = "cefed"
		}
	}
	switch kind {
	case "adam":
		if deploy.ExchangesEmbeddings(s.algo) {
			return nil, nil, fmt.Errorf("--algo %s needs --learner cefed", s.algo)
		}
		return nil, nil, nil
	case "cefed":
	default:
		return nil, nil, fmt.Errorf("unknown --learner %q (want adam or cefed)", kind)
	}
	ids := make([]string, len(clients))
	for i := range clients {
		ids[i] = deploy.ClientID(i)
	}
	ls := make([]learner.Learner, len(clients))
	for i, cg := range clients {
		cfg := deploy.CEFedConfigFor(s.algo, s.cefed)
		cfg.Seed = seeds.Party(s.seed, i, seeds.Learner)
		l, err := cefedgnn.New(cg, ids, cfg)
		if err != nil {
			return nil, nil, err
		}
		ls[i] = l
	}
	return ls, ids, nil
}

func runSim(cmd *cobra.Command, g *globalFlags, s simFlags) error {
	start := time.Now()
	if s.scenario == "aml" {
		return runAMLSim(cmd, g, s, start)
	}
	if s.lpsfed.dir != "" {
		return runLPSFedSim(cmd, g, s, start)
	}
	log := g.logger()
	priv, err := s.priv.sim(cmd, s.seed, s.out)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	d, name, err := job.LoadNodeDataset(s.dir, s.scenario, s.csbm.cfg, s.seed)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if d, err = job.ResplitDataset(d, s.split, s.seed); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	clients, err := job.PartitionDataset(d, s.clients, s.partition, s.seed)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	learners, ids, err := nodeLearners(s, clients)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if !cmd.Flags().Changed("local-epochs") {
		s.localEpochs = deploy.DefaultLocalEpochs(s.algo, s.localEpochs)
		setEffective(cmd.Flags(), "local-epochs", s.localEpochs)
	}
	var gspServer aggregator.FedGSPConfig
	if s.algo == aggregator.AlgoFedGSP {
		preset, gc, sc, err := s.fedgsp.resolve(cmd, d)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		log.Info().Str("preset", preset).Int("orders", gc.Orders).Float64("tau", gc.Tau).Int("hidden", gc.Hidden).Int("layers", gc.Layers).
			Float64("lr", gc.LR1).Float64("coef_lr", gc.LR2).Float64("gamma", sc.Gamma).Float64("alpha", sc.Alpha).Float64("beta", sc.Beta).
			Str("metric", gc.Metric).Msg("fedgsp settings")
		if learners, ids, err = fedgspLearners(clients, gc, s.seed); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		gspServer = sc
	}
	priv.EmbSigma, priv.DescSigma = s.embSigma, s.fedgsp.descSigma
	ps := graph.PartitionStats(clients)
	log.Info().Str("dataset", name).Int("nodes", d.N()).Int("clients", s.clients).Str("partition", s.partition).
		Int("min_nodes", ps.MinNodes).Int("max_nodes", ps.MaxNodes).Float64("cross_share", ps.CrossShare).Msg("partitioned")
	slow, err := s.async.slowFactors(len(learners))
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	var rows []roundRow
	metric := d.ScoreMetric()
	p := newProgress("sim "+s.algo, s.rounds)
	sc := s.simConfig(deploy.TaskNode, log, priv)
	sc.Clients, sc.Node, sc.Learners, sc.IDs, sc.SlowFactor = clients, s.node, learners, ids, slow
	if sc.InProcess, err = job.InProcessConns(s.conns, s.natsURL, len(clients)+2, log); err != nil {
		return err
	}
	sc.FedGSP = gspServer
	sc.OnRound = func(rc aggregator.RoundClosed, scores map[string]map[string]float64) {
		acc := meanOf(scores, nodeScore)
		rows = append(rows, roundRow{rc: rc, acc: acc})
		p.update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d test_%s(start)=%.4f%s", rc.Reason, len(rc.In), len(rc.Late), metric, acc, budgetNote(rc)))
	}
	sc.OnProgress = func(_ aggregator.RoundClosed, pr deploy.Progress) { rows[len(rows)-1].prog = pr }
	res, err := job.RunSim(cmd.Context(), sc)
	p.finish()
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	acc, n := meanScore(res.Agg.Final, "test_acc")
	f1, _ := meanScore(res.Agg.Final, "test_macro_f1")
	accW := weightedScore(res.Agg.Final, "test_acc", "test_n")
	std := stdScore(res.Agg.Final, "test_acc", acc)
	metrics := map[string]any{
		"test_acc": acc, "test_acc_std": std, "test_acc_weighted": accW, "test_macro_f1": f1,
		"clients_reporting": n, "partition": s.partition, "split": s.split, "rejects": res.Agg.Rejects,
	}
	putClientScores(metrics, metric, res.Agg.Final)
	putRobust(metrics, sc.Robust, res.Agg)
	if lr := res.LedgerRate; lr.Appends > 0 {
		metrics["ledger_appends_per_s"], metrics["ledger_appends_per_s_slowest_round"] = lr.PerSecond, lr.SlowestRound
	}
	rep := Report{
		Command: "sim", Algo: s.algo, Dataset: name, Clients: s.clients, Rounds: int(res.Agg.Rounds), Seed: int64(s.seed),
		Metrics: metrics,
		Comm:    &CommReport{Bytes: res.Bytes, Messages: res.Messages},
		Privacy: privacyReport(res.Agg.Final, res.Ledger, priv),
	}
	if s.out != "" {
		if err := writeSimRun(cmd, s.out, simRun{rep: rep, rows: rows, metric: "test_" + metric, clientScore: nodeScore, res: res, priv: priv, start: start}); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return g.emit(rep, start)
}

// simConfig maps the flags every task shares onto the simulation's
// options; each task's runner adds its learners and progress callbacks.
func (s simFlags) simConfig(task string, log zerolog.Logger, priv job.SimPrivacy) job.SimConfig {
	return job.SimConfig{Job: s.job, Task: task, Algo: s.algo, Rounds: s.rounds, LocalEpochs: s.localEpochs,
		RoundTimeout: s.roundTimeout, DeadlineFactor: s.deadlineFactor, DeadlineCap: s.deadlineCap,
		Quorum: s.quorum, Buffer: s.async.buffer, Seed: s.seed,
		Staleness: aggregator.Staleness{Policy: s.staleness, Factor: s.staleFactor, A: s.staleA},
		Robust:    s.robust.robust(),
		NATSURL:   s.natsURL, Secure: s.secure, Durable: s.durable, Privacy: priv, Log: log, Metrics: s.live}
}

// nodeScore is a client's test score in the dataset's metric: test_score,
// or test_acc from a learner that reports accuracy only (CE-FedGNN's);
// NaN when it reported neither.
func nodeScore(sc map[string]float64) float64 {
	if v, ok := sc["test_score"]; ok {
		return v
	}
	if v, ok := sc["test_acc"]; ok {
		return v
	}
	return math.NaN()
}

// meanOf averages score over the clients whose score is a number; NaN
// when none is.
func meanOf(scores map[string]map[string]float64, score func(map[string]float64) float64) float64 {
	var sum float64
	n := 0
	for _, sc := range scores {
		if v := score(sc); !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

type roundRow struct {
	rc   aggregator.RoundClosed
	acc  float64
	prog deploy.Progress
}

// meanScore averages key over clients, unweighted: "mean client accuracy".
func meanScore(scores map[string]map[string]float64, key string) (float64, int) {
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var sum float64
	n := 0
	for _, id := range ids {
		if v, ok := scores[id][key]; ok && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

func stdScore(scores map[string]map[string]float64, key string, mean float64) float64 {
	var ss float64
	n := 0
	for _, sc := range scores {
		if v, ok := sc[key]; ok && !math.IsNaN(v) {
			ss += (v - mean) * (v - mean)
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return math.Sqrt(ss / float64(n-1))
}

// weightedScore averages key weighted by the count in weightKey: the score
// over the union of the clients' evaluation nodes.
func weightedScore(scores map[string]map[string]float64, key, weightKey string) float64 {
	var sum, w float64
	for _, sc := range scores {
		sum += sc[key] * sc[weightKey]
		w += sc[weightKey]
	}
	if w == 0 {
		return 0
	}
	return sum / w
}
