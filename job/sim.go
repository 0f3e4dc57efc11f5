package job

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/learner"
	"graphfed/learner/node"
	"graphfed/privacy"
	"graphfed/telemetry"
)

// SimConfig describes an in-process federated job: one aggregator and one
// agent per client, built by deploy as a deployment builds them, on an
// embedded NATS server (plain or Secure) or an external one.
type SimConfig struct {
	Job string
	// Task is deploy.TaskNode (default), TaskAML or TaskRec; with Algo it
	// decides what is exchanged (deploy.ExchangesEmbeddings).
	Task    string
	Algo    string
	Clients []*graph.ClientGraph
	Node    node.Config
	// Learners, when set, are the clients' learners (one per client, ids
	// from IDs or deploy.ClientID(i)); Clients and Node are then ignored.
	Learners    []learner.Learner
	IDs         []string
	Rounds      int
	LocalEpochs int
	// EvalEvery: agents score their starting model every this many rounds;
	// 0: every round; negative: the final model only.
	EvalEvery    int
	RoundTimeout time.Duration
	// DeadlineFactor and DeadlineCap adapt the rounds' deadlines to the
	// measured update times (aggregator.Config.DeadlineFactor), with
	// RoundTimeout as the floor; 0: fixed deadlines.
	DeadlineFactor float64
	DeadlineCap    time.Duration
	// FinalWait bounds the aggregator's wait for the final scores; 0: 10s.
	FinalWait time.Duration
	Quorum    int
	Staleness aggregator.Staleness
	// Robust is the averaging algorithms' aggregation rule
	// (aggregator.Config.Robust); zero: the sample-weighted mean.
	Robust aggregator.Robust
	// ServerOpt is the averaging algorithms' server optimizer
	// (aggregator.Config.ServerOpt); zero: the mean is the new model.
	ServerOpt aggregator.ServerOpt
	// FreezeRounds and LPSFed configure LPSFed's rounds (Algo lpsfed or
	// lpsfed-bpr).
	FreezeRounds int
	LPSFed       aggregator.LPSFedConfig
	// FedGSP is FedGSP's server configuration (Algo fedgsp); the zero
	// value takes aggregator.DefaultFedGSPConfig.
	FedGSP aggregator.FedGSPConfig
	Seed   uint64
	// NATSURL names an external server or cluster; empty starts an embedded
	// server for the run.
	NATSURL string
	// Secure runs the job signed under per-party permissions: fresh keys,
	// keyring and server configuration in a temporary directory
	// (deploy.LocalOptions.Secure). Not with NATSURL.
	Secure bool
	// InProcess connects every party to the embedded server through an
	// in-memory pipe instead of a socket (deploy.LocalOptions.InProcess).
	InProcess bool
	// Durable checkpoints the aggregator to JetStream and passes the
	// updates through the job's update stream.
	Durable bool
	// Slowdown delays given clients (by index) every round.
	Slowdown map[int]time.Duration
	// SlowFactor makes given clients (by index) that many times slower.
	SlowFactor map[int]float64
	// Buffer > 0 aggregates every Buffer updates (FedBuff) instead of
	// waiting for the quorum.
	Buffer int
	// SecAgg is the secure-aggregation mode (SecAggAuto, the default: on
	// wherever the algorithm's close is a sum; SecAggOn; SecAggOff).
	SecAgg string
	// SecAggBits is b, the bits of a masked word; 0: each round's
	// fewest that keep 2^24 steps at the clip (aggregator.SecAgg.Bits).
	SecAggBits int
	Privacy    SimPrivacy
	Log        zerolog.Logger
	// OnRound is called after every close decision with the clients' scores
	// of the model the round started from.
	OnRound func(rc aggregator.RoundClosed, scores map[string]map[string]float64)
	// OnProgress, if set, is called after every close decision with the
	// traffic and privacy spending so far.
	OnProgress func(rc aggregator.RoundClosed, p deploy.Progress)
	// Metrics, when set, records every party's live metrics into one
	// registry (telemetry; party and client labels tell them apart).
	Metrics *telemetry.Metrics
}

// SimResult is a finished simulation.
type SimResult struct {
	Agg      aggregator.Result
	Agents   []agent.Result
	Messages int64 // published by every party, replies included
	Bytes    int64
	Traffic  map[bus.Kind]bus.Traffic // Messages and Bytes per message kind
	Seconds  float64
	// Ledger is every entry of the job's privacy ledger, in order.
	Ledger []privacy.Entry
	// LedgerRate is how fast the ledger took the banks' appends.
	LedgerRate LedgerRate
}

// RunSim starts the job's environment, builds the aggregator and one agent
// per client through deploy, runs them and waits for the job to finish.
func RunSim(ctx context.Context, cfg SimConfig) (SimResult, error) {
	start := time.Now()
	fail := func(err error) (SimResult, error) { return SimResult{}, fmt.Errorf("scenarios: sim: %w", err) }
	learners, ids, err := simLearners(cfg)
	if err != nil {
		return fail(err)
	}
	o, err := simJobOptions(cfg, learners, ids)
	if err != nil {
		return fail(err)
	}
	var job *deploy.Job // the aggregator reports rounds only once it runs
	o.Aggregator.OnRound = func(rc aggregator.RoundClosed) {
		if cfg.OnRound != nil {
			cfg.OnRound(rc, job.Aggregator().Server().RoundScores(rc.Round))
		}
		if cfg.OnProgress != nil {
			cfg.OnProgress(rc, job.Progress())
		}
	}
	if job, err = deploy.StartJob(ctx, o); err != nil {
		return fail(err)
	}
	defer job.Close()
	cfg.Log.Info().Str("url", job.Local().URL()).Bool("secure", cfg.Secure).Bool("durable", cfg.Durable).Msg("job started")
	jr, runErr := job.Run(ctx)
	res := SimResult{Agg: jr.Aggregator, Agents: jr.Agents, Messages: jr.Messages, Bytes: jr.Bytes, Traffic: jr.Traffic}
	// The clients' own reports stand in for final scores the aggregator
	// stopped waiting for.
	for _, r := range res.Agents {
		if _, ok := res.Agg.Final[r.Client]; !ok && r.Final != nil && res.Agg.Final != nil {
			res.Agg.Final[r.Client] = r.Final
		}
	}
	if runErr != nil {
		return res, fmt.Errorf("scenarios: sim: %w", runErr)
	}
	rd, err := job.LedgerReading(ctx)
	if err != nil {
		return res, fmt.Errorf("scenarios: sim: %w", err)
	}
	res.Ledger, res.LedgerRate = rd.Entries, ledgerRate(rd)
	if err := exportLedger(ctx, cfg.Privacy.ExportLedger, res.Ledger); err != nil {
		return res, fmt.Errorf("scenarios: sim: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// simJobOptions maps the simulation onto deploy's options: the round
// configuration, and per client its learner, privacy (its own noise seed)
// and pace.
func simJobOptions(cfg SimConfig, learners []learner.Learner, ids []string) (deploy.JobOptions, error) {
	task := cfg.Task
	if task == "" {
		task = deploy.TaskNode
	}
	round := aggregator.Config{Algo: cfg.Algo, Rounds: cfg.Rounds, MinClients: len(learners), Quorum: cfg.Quorum,
		RoundTimeout: cfg.RoundTimeout, Staleness: cfg.Staleness, Buffer: cfg.Buffer, FreezeRounds: cfg.FreezeRounds,
		DeadlineFactor: cfg.DeadlineFactor, DeadlineCap: cfg.DeadlineCap, Robust: cfg.Robust,
		ServerOpt: cfg.ServerOpt}
	if round.Personalizes() {
		round.LPSFed, round.FedGSP = cfg.LPSFed, cfg.FedGSP
	}
	on, err := resolveSecAgg(cfg.SecAgg, cfg.Algo, cfg.Robust, true)
	if err != nil {
		return deploy.JobOptions{}, err
	}
	round.SecAgg.On, round.SecAgg.Bits = on, cfg.SecAggBits
	o := deploy.JobOptions{
		Local:   deploy.LocalOptions{Job: cfg.Job, Secure: cfg.Secure, URL: cfg.NATSURL, InProcess: cfg.InProcess},
		Durable: cfg.Durable,
		Aggregator: deploy.AggregatorOptions{Task: task, Round: round, InitSeed: cfg.Seed, Enrol: ids,
			FinalWait: cfg.FinalWait, Log: cfg.Log, Metrics: cfg.Metrics},
	}
	for i, l := range learners {
		p, err := cfg.Privacy.options(i)
		if err != nil {
			return o, err
		}
		o.Agents = append(o.Agents, deploy.AgentOptions{ID: ids[i], Learner: l, Privacy: p,
			LocalEpochs: cfg.LocalEpochs, EvalEvery: cfg.EvalEvery, Slowdown: cfg.Slowdown[i],
			SlowFactor: cfg.SlowFactor[i], Log: cfg.Log, Metrics: cfg.Metrics})
	}
	return o, nil
}

// simLearners returns the clients' learners and ids: the given ones, or a
// node.Learner per client graph.
func simLearners(cfg SimConfig) ([]learner.Learner, []string, error) {
	if len(cfg.Learners) > 0 {
		ids := cfg.IDs
		if ids == nil {
			for i := range cfg.Learners {
				ids = append(ids, deploy.ClientID(i))
			}
		}
		if len(ids) != len(cfg.Learners) {
			return nil, nil, fmt.Errorf("%d ids for %d learners", len(ids), len(cfg.Learners))
		}
		return cfg.Learners, ids, nil
	}
	if len(cfg.Clients) == 0 {
		return nil, nil, errors.New("no clients")
	}
	data := make([]deploy.Data, len(cfg.Clients))
	ids := make([]string, len(cfg.Clients))
	for i, cg := range cfg.Clients {
		data[i], ids[i] = deploy.Data{Node: cg}, deploy.ClientID(i)
	}
	o := deploy.DefaultLearnerOptions()
	o.Node, o.NodeKind = cfg.Node, "adam"
	learners, err := buildLearners(deploy.TaskNode, cfg.Algo, data, ids, o, cfg.Seed, cfg.Log)
	return learners, ids, err
}

// SimJobOptions are the deploy options RunSim starts cfg's job with, for
// rigs that start the same parties themselves to attack them.
func SimJobOptions(cfg SimConfig) (deploy.JobOptions, error) {
	learners, ids, err := simLearners(cfg)
	if err != nil {
		return deploy.JobOptions{}, fmt.Errorf("job: sim: %w", err)
	}
	return simJobOptions(cfg, learners, ids)
}
