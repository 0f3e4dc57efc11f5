package job

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/runreport"
	"graphfed/spectral"
	"graphfed/workload/rec"
)

// RecSpec is a federated recommendation job on a LightGCN dataset
// (`graphfed sim --lightgcn DIR`): FedAvg, LPSFed (BPR) or LPSFed on
// LPSFed's client model, over spectral-clustering clients. Zero fields
// are unset and take the library's defaults.
type RecSpec struct {
	// Sim is what every simulated job shares; Algo "" is
	// deploy.DefaultAlgo's (lpsfed), Rounds 0 DefaultRecRounds (the
	// paper's), RoundTimeout 0 DefaultRecRoundTimeout, LocalEpochs 0
	// DefaultNodeLocalEpochs.
	Sim   SimConfig
	Conns string
	Dir   string // the LightGCN directory (train.txt, test.txt)
	// Clients is the spectral clients (0: DefaultNodeClients); Partition
	// must be "spectral" (LPSFed's benchmark) or "".
	Clients   int
	Partition string
	// Validation > 0 holds out this share of each user's training items
	// and evaluates on them instead of test.txt (for tuning).
	Validation    float64
	MaxUsers      int     // keep the first N users (0: all)
	EdgeVariation float64 // the spectral partition's spread; 0: spectral.DefaultEdgeVariation
	// Protocol re-splits the interactions and picks the partitioning
	// (LPSFed's protocol, issue 32); with a validation share the round
	// of best validation Recall@20 is selected (metrics "selected").
	Protocol RecProtocol
	// EvalEvery scores every N rounds too; 0: the final model only.
	EvalEvery int
	Learner   deploy.RecOptions // Model (zero: LPSFed's paper setting) and Strict; Phi 0: deploy.DefaultRecOptions's
	// Server is LPSFed's reference graph settings (Phi, Seed and the
	// reference are the job's); FreezeRounds distributes nothing in the
	// first rounds.
	Server       aggregator.LPSFedConfig
	FreezeRounds int
	Privacy      Privacy
	Seed         *uint64 // as NodeSpec.Seed
	Out          string
	Settings     map[string]string
	Changed      []string
	Progress     Progress
}

// Defaults of a recommendation job.
const (
	DefaultRecRounds = 40 // the paper's 40 global rounds (Appendix D.6)
	// DefaultRecRoundTimeout: a local epoch on a Gowalla client takes tens
	// of seconds on two cores; sim's 30 s would close every round empty.
	DefaultRecRoundTimeout = time.Hour
	// DefaultEdgeVariation is the spectral partition's spread of
	// interactions across clients.
	DefaultEdgeVariation = spectral.DefaultEdgeVariation
)

// RecResult is a finished recommendation job.
type RecResult struct {
	Summary runreport.Summary
	Sim     SimResult
}

// RunRec partitions the dataset into spectral clients, prepares each
// one's eigenpairs and kernel (rec.PrepareClients), builds their
// learners and runs the job.
func RunRec(ctx context.Context, spec RecSpec) (RecResult, error) {
	start := time.Now()
	fail := func(err error) (RecResult, error) { return RecResult{}, fmt.Errorf("sim: %w", err) }
	if spec.Partition != "" && spec.Partition != "spectral" {
		return fail(fmt.Errorf("--lightgcn needs --partition spectral (LPSFed's benchmark), not %q", spec.Partition))
	}
	holdout, err := checkRecProtocol(spec)
	if err != nil {
		return fail(err)
	}
	sc := spec.Sim
	if sc.RoundTimeout == 0 {
		sc.RoundTimeout = DefaultRecRoundTimeout
	}
	sc = resolveSim(sc)
	log, p := sc.Log, progressOr(spec.Progress)
	seed, noise := seedOf(spec.Seed)
	sc.Seed, sc.Task = seed, deploy.TaskRec
	if sc.Algo == "" {
		sc.Algo = deploy.DefaultAlgo(deploy.TaskRec)
	}
	if err := deploy.CheckTaskAlgo(deploy.TaskRec, sc.Algo); err != nil {
		return fail(err)
	}
	if sc.Rounds == 0 {
		sc.Rounds = DefaultRecRounds
	}
	if sc.LocalEpochs == 0 {
		sc.LocalEpochs = DefaultNodeLocalEpochs
	}
	clients, ev := recShape(spec)
	lr, def := spec.Learner, deploy.DefaultRecOptions()
	if lr.Phi == 0 {
		lr.Phi = def.Phi
	}
	if lr.Model.Dim == 0 { // an unset model: LPSFed's paper setting
		lr.Model = def.Model
	}
	priv, err := spec.Privacy.forRun(deploy.TaskRec, sc.Algo, 0, noise, spec.Out)
	if err != nil {
		return fail(err)
	}
	d, err := graph.LoadLightGCN(spec.Dir)
	if err != nil {
		return fail(err)
	}
	split := "test"
	if spec.Validation != 0 {
		if d, err = graph.HoldOutValidation(d, spec.Validation, seed); err != nil {
			return fail(fmt.Errorf("--validation: %w", err))
		}
		split = "validation"
	}
	if holdout.Random() {
		split = holdout.String()
	}
	prepared, prep, err := rec.PrepareClients(d, recClientsOptions(spec, holdout, clients, lr.Phi, ev, seed))
	if err != nil {
		return fail(err)
	}
	selecting := holdout.Random() && holdout.Val > 0
	for _, c := range prep.Clients {
		log.Info().Str("client", c.ID).Int("users", c.Users).Int("items", c.Items).Int("train", c.Train).
			Int("test_users", c.TestUsers).Int("test_dropped", c.TestDropped).Int("val_users", c.ValUsers).Int("components", c.Components).
			Float64("eig_seconds", c.Seconds).Msg("client prepared")
	}
	trainStart := time.Now()
	if sc.Learners, sc.IDs, err = RecLearners(prepared, sc.Algo, lr, seed, log); err != nil {
		return fail(err)
	}
	sc.EvalEvery, sc.FreezeRounds = spec.EvalEvery, spec.FreezeRounds
	if sc.EvalEvery == 0 {
		sc.EvalEvery = -1 // the final model only
		if selecting {
			sc.EvalEvery = 1 // the selection needs every round's validation scores
		}
	}
	if sc.InProcess, err = InProcessConns(spec.Conns, sc.NATSURL, len(prepared)+2, log); err != nil {
		return fail(err)
	}
	sc.LPSFed = spec.Server
	sc.LPSFed.Phi, sc.LPSFed.Seed, sc.LPSFed.Reference = lr.Phi, seed, aggregator.GNMKReference
	// A final full ranking on a large client takes as long as a local
	// epoch: the final scores get a round's time.
	sc.FinalWait = sc.RoundTimeout
	sc.Privacy = priv
	var rows []runreport.Round
	bar := p.Stage("sim "+sc.Algo, sc.Rounds)
	sc.OnRound = func(rc aggregator.RoundClosed, _ map[string]map[string]float64) {
		var margin float64
		if rc.Mix != nil {
			margin = rc.Mix.GlobalMargin
		}
		rows = append(rows, roundOf(rc, math.NaN()))
		bar.Update(int(rc.Round), fmt.Sprintf("%s in=%d frozen=%v margin=%.3f", rc.Reason, len(rc.In), rc.Frozen, margin))
	}
	sc.OnProgress = func(_ aggregator.RoundClosed, pr deploy.Progress) { withProgress(&rows[len(rows)-1], pr) }
	res, err := RunSim(ctx, sc)
	bar.Finish()
	if err != nil {
		return fail(err)
	}
	cfg := recConfig{spec: spec, lr: lr, sc: sc, edgeVariation: ev, split: split}
	metrics := recMetrics(res, prep, cfg, time.Since(trainStart).Seconds())
	if selecting {
		sel, ok := selectRecRound(res.Agg.PerRound, res.Agg.Final, sc.Rounds, len(prepared))
		if !ok {
			return fail(fmt.Errorf("no round has validation scores from all %d clients", len(prepared)))
		}
		metrics["selected"] = sel
		log.Info().Int("round", sel.Round).Float64("val_recall_at_20", sel.ValRecall).Float64("recall_at_20", sel.Recall).
			Float64("ndcg_at_20", sel.NDCG).Msg("best validation round")
	}
	sum := simSummary(sc, filepath.Base(filepath.Clean(spec.Dir)), len(prepared), res, priv, metrics)
	out := RecResult{Summary: sum, Sim: res}
	if spec.Out != "" {
		for i, r := range rows { // recall of the model each round started from, when evaluated
			if v, n := meanScore(res.Agg.PerRound[r.Round], "recall_at_20"); n > 0 {
				rows[i].Score = v
			}
		}
		files := runFiles(sum, spec.Settings, spec.Changed, start, res, priv, "recall_at_20", rows, keyScore("recall_at_20"))
		effective(files.Summary.Settings, sc)
		if err := runreport.WriteRun(ctx, spec.Out, files); err != nil {
			return out, fmt.Errorf("sim: %w", err)
		}
	}
	return out, nil
}

// recConfig is what a recommendation report restates of its settings.
type recConfig struct {
	spec          RecSpec
	lr            deploy.RecOptions
	sc            SimConfig
	edgeVariation float64
	split         string
}

// recMetrics are the report's metrics: Recall@20 and NDCG@20 as the mean
// over clients (and pooled over users), per client, and the configuration.
func recMetrics(res SimResult, prep rec.ClientsStats, c recConfig, trainSec float64) map[string]any {
	recall, n := meanScore(res.Agg.Final, "recall_at_20")
	ndcg, _ := meanScore(res.Agg.Final, "ndcg_at_20")
	per := map[string]any{}
	for _, cl := range prep.Clients {
		sc := res.Agg.Final[cl.ID]
		per[cl.ID] = map[string]any{"recall_at_20": sc["recall_at_20"], "ndcg_at_20": sc["ndcg_at_20"],
			"eval_users": sc["eval_users"], "test_users": cl.TestUsers, "users": cl.Users, "items": cl.Items,
			"train": cl.Train, "test_dropped": cl.TestDropped, "components": cl.Components,
			"val_recall_at_20": sc["val_recall_at_20"], "val_users": cl.ValUsers}
	}
	mc := c.lr.Model
	eval := "all test users of every client"
	if mc.EvalUsers > 0 {
		eval = fmt.Sprintf("a fixed seeded sample of at most %d test users per client", mc.EvalUsers)
	}
	var rhoBar map[string]float64
	if k := len(res.Agg.Mixes); k > 0 {
		rhoBar = res.Agg.Mixes[k-1].RhoBar
	}
	return map[string]any{
		"recall_at_20": recall, "ndcg_at_20": ndcg, "clients_reporting": n,
		"recall_at_20_pooled": weightedScore(res.Agg.Final, "recall_at_20", "eval_users"),
		"ndcg_at_20_pooled":   weightedScore(res.Agg.Final, "ndcg_at_20", "eval_users"),
		"per_client":          per, "rho_bar": rhoBar, "evaluation": eval, "split": c.split, "partition": "spectral",
		"partitioning": c.spec.Protocol.Partitioning, "edge_spread": edgeSpread(prep.Clients),
		"prep_seconds": prep.PartitionSeconds + prep.EigenSeconds, "train_seconds": trainSec,
		"config": map[string]any{"dim": mc.Dim, "phi": c.lr.Phi, "layers": mc.Layers, "local_epochs": c.sc.LocalEpochs,
			"batch": mc.BatchSize, "negatives": mc.Negatives, "lr": mc.LR, "optimizer": "rmsprop", "tau": mc.Tau,
			"omega": mc.Omega, "gamma": mc.Gamma, "margin_fallback": mc.MarginFallback, "freeze_rounds": c.spec.FreezeRounds,
			"strict": c.lr.Strict, "max_users": c.spec.MaxUsers,
			"pool_hidden": mc.PoolHidden, "pred_hidden": mc.PredHidden, "edge_variation": c.edgeVariation,
			"val_users": mc.ValUsers, "eval_every": c.sc.EvalEvery},
		"rejects": res.Agg.Rejects,
	}
}
