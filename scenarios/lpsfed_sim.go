package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/gnn"
	"graphfed/lpsfed"
)

// LPSFedClient is one client's prepared input to an LPSFed job: its
// user–item subgraph, its Φ lowest-frequency eigenvectors (n×Φ, n =
// Data.Nodes()) and its low-pass kernel K^c over the same Φ frequencies.
type LPSFedClient struct {
	ID      string
	Data    *lpsfed.Data
	Vectors *gnn.Tensor
	Kernel  []float64
}

// LPSFedSimConfig describes an in-process LPSFed (or FedAvg) job on
// prepared clients.
type LPSFedSimConfig struct {
	Job     string
	Algo    string // aggregator.AlgoFedAvg, AlgoLPSFedBPR or AlgoLPSFed
	Clients []LPSFedClient
	// Model is every client's model configuration; its Loss follows Algo
	// and its Seed is made distinct per client.
	Model        lpsfed.Config
	Rounds       int
	LocalEpochs  int
	FreezeRounds int
	EvalEvery    int // per-round evaluation period (0: final only)
	Phi          int
	Strict       bool
	StrictStats  aggregator.ReferenceStats
	RefEvery     int
	Reference    aggregator.ReferenceKernel
	RoundTimeout time.Duration
	// FinalWait bounds the aggregator's wait for the clients' final
	// scores after the last round; default RoundTimeout (a final full
	// ranking on a large client takes as long as a local epoch).
	FinalWait time.Duration
	Seed      uint64
	NATSURL   string // empty: an embedded server
	Secure    bool   // signed, under per-party permissions (SimConfig.Secure)
	Durable   bool   // a durable aggregator and update stream (SimConfig.Durable)
	Privacy   SimPrivacy
	Log       zerolog.Logger
	OnRound   func(aggregator.RoundClosed, aggregator.Mixed)
}

// LPSFedSimResult is a finished LPSFed job.
type LPSFedSimResult = SimResult

// RunLPSFedSim builds one LPSFed learner per prepared subgraph and runs
// them as a recommendation job through RunSim: the same parties, built by
// deploy, as every other simulation.
func RunLPSFedSim(ctx context.Context, cfg LPSFedSimConfig) (LPSFedSimResult, error) {
	if len(cfg.Clients) == 0 {
		return LPSFedSimResult{}, errors.New("scenarios: lpsfed sim: no clients")
	}
	learners := make([]agent.Learner, len(cfg.Clients))
	ids := make([]string, len(cfg.Clients))
	for i, pc := range cfg.Clients {
		l, err := lpsfedLearner(cfg, pc, i)
		if err != nil {
			return LPSFedSimResult{}, fmt.Errorf("scenarios: lpsfed sim: client %s: %w", pc.ID, err)
		}
		learners[i], ids[i] = l, pc.ID
	}
	if cfg.FinalWait == 0 {
		cfg.FinalWait = cfg.RoundTimeout
	}
	evalEvery := cfg.EvalEvery
	if evalEvery == 0 {
		evalEvery = -1 // final scores only
	}
	var onRound func(aggregator.RoundClosed, map[string]map[string]float64)
	if cfg.OnRound != nil {
		onRound = func(rc aggregator.RoundClosed, _ map[string]map[string]float64) {
			var mx aggregator.Mixed
			if rc.Mix != nil {
				mx = *rc.Mix
			}
			cfg.OnRound(rc, mx)
		}
	}
	return RunSim(ctx, SimConfig{Job: cfg.Job, Task: deploy.TaskRec, Algo: cfg.Algo, Learners: learners, IDs: ids,
		Rounds: cfg.Rounds, LocalEpochs: cfg.LocalEpochs, EvalEvery: evalEvery, RoundTimeout: cfg.RoundTimeout,
		FinalWait: cfg.FinalWait, FreezeRounds: cfg.FreezeRounds,
		LPSFed: aggregator.LPSFedConfig{Phi: cfg.Phi, Strict: cfg.Strict, StrictStats: cfg.StrictStats,
			RefEvery: cfg.RefEvery, Seed: cfg.Seed, Reference: cfg.Reference},
		Seed: cfg.Seed, NATSURL: cfg.NATSURL, Secure: cfg.Secure, Durable: cfg.Durable, Privacy: cfg.Privacy,
		Log: cfg.Log, OnRound: onRound})
}

// lpsfedLearner builds client i's model (its loss follows the algorithm,
// its seed its own) and the learner around it.
func lpsfedLearner(cfg LPSFedSimConfig, pc LPSFedClient, i int) (agent.Learner, error) {
	mc := cfg.Model
	mc.Loss = lpsfed.LossFor(cfg.Algo)
	mc.Seed = cfg.Seed*1000003 + uint64(i) + 1
	m, err := lpsfed.NewModel(pc.Data, pc.Vectors, mc)
	if err != nil {
		return nil, err
	}
	log := cfg.Log.With().Str("client", pc.ID).Logger()
	return lpsfed.NewLearner(lpsfed.LearnerConfig{Strict: cfg.Strict, Log: log}, m, pc.Kernel)
}
