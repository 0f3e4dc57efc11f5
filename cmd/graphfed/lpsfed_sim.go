package main

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/job"
	"graphfed/lpsfed"
	"graphfed/spectral"
	"graphfed/workload/rec"
)

// lpsfedFlags are sim's settings for federated recommendation on a
// LightGCN-format dataset (--lightgcn DIR): FedAvg, LPSFed (BPR) and
// LPSFed on LPSFed's client model.
type lpsfedFlags struct {
	dir                        string
	phi, dim, batch, negatives int
	poolHidden, predHidden     int
	evalUsers, evalEvery       int
	maxUsers                   int
	lr, tau, omega, gamma      float64
	edgeVariation              float64
	validation                 float64
	marginFallback             bool
	ref                        recFlags // Φ lives in phi above
}

func (l *lpsfedFlags) register(cmd *cobra.Command) {
	d := lpsfed.DefaultConfig()
	f := cmd.Flags()
	f.StringVar(&l.dir, "lightgcn", "", "recommendation dataset in the LightGCN layout (train.txt, test.txt): runs --algo fedavg, lpsfed-bpr or lpsfed (defaults then: 40 rounds, round timeout 1h)")
	f.IntVar(&l.phi, "phi", 128, "LPSFed: low-pass cut-off Φ (eigenpairs per client)")
	f.IntVar(&l.dim, "emb-dim", d.Dim, "LPSFed: embedding width d")
	f.IntVar(&l.batch, "rec-batch", d.BatchSize, "LPSFed: positive interactions per step")
	f.IntVar(&l.negatives, "negatives", d.Negatives, "LPSFed: sampled negatives per positive")
	f.IntVar(&l.poolHidden, "pool-hidden", 0, "LPSFed: hidden width of the pooling MLP (0: one affine map)")
	f.IntVar(&l.predHidden, "pred-hidden", 0, "LPSFed: hidden width of the predictive MLP (0: one affine map)")
	f.Float64Var(&l.lr, "rec-lr", d.LR, "LPSFed: RMSProp learning rate")
	f.Float64Var(&l.tau, "tau", d.Tau, "LPSFed: BC-loss temperature τ")
	f.Float64Var(&l.omega, "omega", d.Omega, "LPSFed: weight ω of the server's margin (Eq. 15)")
	f.Float64Var(&l.gamma, "margin-gamma", d.Gamma, "LPSFed: margin strength γ (Eq. 8)")
	f.BoolVar(&l.marginFallback, "margin-fallback", d.MarginFallback, "LPSFed: where Eq. 8's guard π − R̂ binds (no gradient), use ArcFace's fallback logit cos R̂ − M̃·sin M̃")
	l.ref.registerReference(f)
	f.IntVar(&l.evalUsers, "eval-users", 0, "recommendation: test users ranked per client, a fixed seeded sample (0: all)")
	f.IntVar(&l.evalEvery, "rec-eval-every", 0, "recommendation: evaluate every N rounds too (0: final model only)")
	f.IntVar(&l.maxUsers, "max-users", 0, "recommendation: keep only the first N users of the dataset (0: all)")
	f.Float64Var(&l.validation, "validation", 0, "recommendation: tune on a validation split instead: hold out this fraction of each user's training items and evaluate on them (test.txt is not used; 0: train on train.txt, evaluate on test.txt)")
	f.Float64Var(&l.edgeVariation, "edge-variation", spectral.DefaultEdgeVariation, "spectral partition: spread of interactions across clients")
}

// runLPSFedSim partitions a LightGCN dataset into spectral-clustering
// clients and runs FedAvg, LPSFed (BPR) or LPSFed on them.
func runLPSFedSim(cmd *cobra.Command, g *globalFlags, s simFlags, start time.Time) error {
	l := s.lpsfed
	// The task's algorithms were checked with the flags
	// (deploy.CheckTaskAlgo).
	if s.partition != "spectral" {
		return fmt.Errorf("sim: --lightgcn needs --partition spectral (LPSFed's benchmark), not %q", s.partition)
	}
	if !cmd.Flags().Changed("round-timeout") {
		// A local epoch on a Gowalla client takes tens of seconds on two
		// cores: sim's 30s default would close every round without updates.
		s.roundTimeout = time.Hour
	}
	if !cmd.Flags().Changed("rounds") {
		s.rounds = 40 // the paper's 40 global rounds (Appendix D.6)
	}
	log := g.logger()
	priv, err := s.priv.sim(cmd, s.seed, s.out)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	d, err := graph.LoadLightGCN(l.dir)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	split := "test"
	if l.validation != 0 {
		if d, err = graph.HoldOutValidation(d, l.validation, s.seed); err != nil {
			return fmt.Errorf("sim: --validation: %w", err)
		}
		split = "validation"
	}
	clients, prep, err := rec.PrepareClients(d, rec.ClientsOptions{Clients: s.clients, Phi: l.phi,
		EdgeVariation: l.edgeVariation, MaxUsers: l.maxUsers, Seed: s.seed})
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	for _, c := range prep.Clients {
		log.Info().Str("client", c.ID).Int("users", c.Users).Int("items", c.Items).Int("train", c.Train).
			Int("test_users", c.TestUsers).Int("test_dropped", c.TestDropped).Int("components", c.Components).
			Float64("eig_seconds", c.Seconds).Msg("client prepared")
	}
	mc := lpsfed.DefaultConfig()
	mc.Dim, mc.BatchSize, mc.Negatives, mc.LR = l.dim, l.batch, l.negatives, l.lr
	mc.PoolHidden, mc.PredHidden, mc.Tau, mc.Omega, mc.Gamma, mc.EvalUsers = l.poolHidden, l.predHidden, l.tau, l.omega, l.gamma, l.evalUsers
	mc.MarginFallback = l.marginFallback
	var rows []roundRow
	p := newProgress("sim "+s.algo, s.rounds)
	trainStart := time.Now()
	learners, ids, err := job.RecLearners(clients, s.algo, deploy.RecOptions{Model: mc, Strict: l.ref.strict}, s.seed, log)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	evalEvery := l.evalEvery
	if evalEvery == 0 {
		evalEvery = -1 // --rec-eval-every 0: the final model only
	}
	sc := s.simConfig(deploy.TaskRec, log, priv)
	sc.Learners, sc.IDs, sc.EvalEvery, sc.FreezeRounds = learners, ids, evalEvery, l.ref.freeze
	if sc.InProcess, err = job.InProcessConns(s.conns, s.natsURL, len(learners)+2, log); err != nil {
		return err
	}
	l.ref.phi = l.phi
	sc.LPSFed = l.ref.config(s.seed)
	sc.LPSFed.Reference = aggregator.GNMKReference
	// A final full ranking on a large client takes as long as a local
	// epoch: the final scores get a round's time.
	sc.FinalWait = s.roundTimeout
	sc.OnRound = func(rc aggregator.RoundClosed, _ map[string]map[string]float64) {
		var margin float64
		if rc.Mix != nil {
			margin = rc.Mix.GlobalMargin
		}
		rows = append(rows, roundRow{rc: rc})
		p.update(int(rc.Round), fmt.Sprintf("%s in=%d frozen=%v margin=%.3f", rc.Reason, len(rc.In), rc.Frozen, margin))
	}
	sc.OnProgress = func(_ aggregator.RoundClosed, pr deploy.Progress) { rows[len(rows)-1].prog = pr }
	res, err := job.RunSim(cmd.Context(), sc)
	p.finish()
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	rep := Report{
		Command: "sim", Algo: s.algo, Dataset: filepath.Base(filepath.Clean(l.dir)), Clients: len(clients),
		Rounds: int(res.Agg.Rounds), Seed: int64(s.seed),
		Metrics: recMetrics(res, prep, l, s, mc, split, time.Since(trainStart).Seconds()),
		Comm:    &CommReport{Bytes: res.Bytes, Messages: res.Messages},
		Privacy: privacyReport(res.Agg.Final, res.Ledger, priv),
	}
	if s.out != "" {
		for i, r := range rows { // recall of the model each round started from, when evaluated
			rows[i].acc = math.NaN()
			if v, n := meanScore(res.Agg.PerRound[r.rc.Round], "recall_at_20"); n > 0 {
				rows[i].acc = v
			}
		}
		score := func(sc map[string]float64) float64 {
			if v, ok := sc["recall_at_20"]; ok {
				return v
			}
			return math.NaN()
		}
		if err := writeSimRun(cmd, s.out, simRun{rep: rep, rows: rows, metric: "recall_at_20", clientScore: score, res: res, priv: priv, start: start}); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	return g.emit(rep, start)
}

// recMetrics are the report's metrics: Recall@20 and NDCG@20 as the mean
// over clients (and pooled over users), per client, and the configuration.
func recMetrics(res job.SimResult, prep rec.ClientsStats, l lpsfedFlags, s simFlags, mc lpsfed.Config, split string, trainSec float64) map[string]any {
	recall, n := meanScore(res.Agg.Final, "recall_at_20")
	ndcg, _ := meanScore(res.Agg.Final, "ndcg_at_20")
	per := map[string]any{}
	for _, c := range prep.Clients {
		sc := res.Agg.Final[c.ID]
		per[c.ID] = map[string]any{"recall_at_20": sc["recall_at_20"], "ndcg_at_20": sc["ndcg_at_20"],
			"eval_users": sc["eval_users"], "test_users": c.TestUsers, "users": c.Users, "items": c.Items,
			"train": c.Train, "test_dropped": c.TestDropped, "components": c.Components}
	}
	eval := "all test users of every client"
	if l.evalUsers > 0 {
		eval = fmt.Sprintf("a fixed seeded sample of at most %d test users per client", l.evalUsers)
	}
	var rhoBar map[string]float64
	if k := len(res.Agg.Mixes); k > 0 {
		rhoBar = res.Agg.Mixes[k-1].RhoBar
	}
	return map[string]any{
		"recall_at_20": recall, "ndcg_at_20": ndcg, "clients_reporting": n,
		"recall_at_20_pooled": weightedScore(res.Agg.Final, "recall_at_20", "eval_users"),
		"ndcg_at_20_pooled":   weightedScore(res.Agg.Final, "ndcg_at_20", "eval_users"),
		"per_client":          per, "rho_bar": rhoBar, "evaluation": eval, "split": split, "partition": "spectral",
		"prep_seconds": prep.PartitionSeconds + prep.EigenSeconds, "train_seconds": trainSec,
		"config": map[string]any{"dim": mc.Dim, "phi": l.phi, "layers": mc.Layers, "local_epochs": s.localEpochs,
			"batch": mc.BatchSize, "negatives": mc.Negatives, "lr": mc.LR, "optimizer": "rmsprop", "tau": mc.Tau,
			"omega": mc.Omega, "gamma": mc.Gamma, "margin_fallback": mc.MarginFallback, "freeze_rounds": l.ref.freeze, "strict": l.ref.strict, "max_users": l.maxUsers,
			"pool_hidden": mc.PoolHidden, "pred_hidden": mc.PredHidden, "edge_variation": l.edgeVariation},
		"rejects": res.Agg.Rejects,
	}
}
