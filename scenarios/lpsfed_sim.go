package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/gnn"
	"graphfed/lpsfed"
	"graphfed/privacy"
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
	Privacy   SimPrivacy
	Log       zerolog.Logger
	OnRound   func(aggregator.RoundClosed, aggregator.Mixed)
}

// LPSFedSimResult is a finished LPSFed job.
type LPSFedSimResult struct {
	Agg      aggregator.Result
	Clients  []agent.Result
	Messages int64 // published by every party, replies included
	Bytes    int64
	Seconds  float64
	Ledger   []privacy.Entry
}

// RunLPSFedSim runs the LPSFed aggregator and one client per prepared
// subgraph on one bus and waits for the job to finish.
func RunLPSFedSim(ctx context.Context, cfg LPSFedSimConfig) (LPSFedSimResult, error) {
	start := time.Now()
	if len(cfg.Clients) == 0 {
		return LPSFedSimResult{}, errors.New("scenarios: lpsfed sim: no clients")
	}
	url := cfg.NATSURL
	if url == "" {
		srv, err := bus.StartServer(bus.ServerOptions{})
		if err != nil {
			return LPSFedSimResult{}, fmt.Errorf("scenarios: lpsfed sim: %w", err)
		}
		defer srv.Shutdown()
		url = srv.ClientURL()
	}
	var transports []*bus.NATSTransport
	defer func() {
		for _, t := range transports {
			t.Close()
		}
	}()
	connect := func(name string) (*bus.NATSTransport, error) {
		nc, err := bus.Connect(url, bus.ConnectOptions{Name: name})
		if err != nil {
			return nil, fmt.Errorf("scenarios: lpsfed sim: %w", err)
		}
		t := bus.NewNATSTransport(nc, true)
		transports = append(transports, t)
		return t, nil
	}
	aggTr, err := connect("aggregator")
	if err != nil {
		return LPSFedSimResult{}, err
	}
	if cfg.FinalWait == 0 {
		cfg.FinalWait = cfg.RoundTimeout
	}
	var onRound func(aggregator.RoundClosed)
	if cfg.OnRound != nil {
		onRound = func(rc aggregator.RoundClosed) {
			var mx aggregator.Mixed
			if rc.Mix != nil {
				mx = *rc.Mix
			}
			cfg.OnRound(rc, mx)
		}
	}
	round := aggregator.Config{Algo: cfg.Algo, Rounds: cfg.Rounds, MinClients: len(cfg.Clients),
		RoundTimeout: cfg.RoundTimeout, FreezeRounds: cfg.FreezeRounds}
	if round.Personalizes() {
		round.LPSFed = aggregator.LPSFedConfig{Phi: cfg.Phi, Strict: cfg.Strict, StrictStats: cfg.StrictStats,
			RefEvery: cfg.RefEvery, Seed: cfg.Seed, Reference: cfg.Reference}
	}
	srv, err := aggregator.NewServer(aggregator.ServerConfig{
		Job: cfg.Job, InitSeed: cfg.Seed, Log: cfg.Log, OnRound: onRound, FinalWait: cfg.FinalWait, Round: round,
	}, aggTr)
	if err != nil {
		return LPSFedSimResult{}, fmt.Errorf("scenarios: lpsfed sim: %w", err)
	}
	clients := make([]*agent.Agent, len(cfg.Clients))
	for i, pc := range cfg.Clients {
		if clients[i], err = newLPSFedClient(ctx, cfg, pc, i, connect); err != nil {
			return LPSFedSimResult{}, err
		}
	}
	res := LPSFedSimResult{Clients: make([]agent.Result, len(clients))}
	errs := make([]error, len(clients))
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { res.Clients[i], errs[i] = c.Run(cctx) })
	}
	res.Agg, err = srv.Run(ctx)
	if err != nil {
		cancel()
		wg.Wait()
		return res, fmt.Errorf("scenarios: lpsfed sim: %w", err)
	}
	wg.Wait()
	// The clients' own reports stand in for final scores the aggregator
	// stopped waiting for.
	for _, r := range res.Clients {
		if _, ok := res.Agg.Final[r.Client]; !ok && r.Final != nil {
			res.Agg.Final[r.Client] = r.Final
		}
	}
	for _, t := range transports {
		m, b := t.Stats()
		res.Messages += m
		res.Bytes += b
	}
	if res.Ledger, err = jobLedger(ctx, aggTr, cfg.Job); err != nil {
		return res, fmt.Errorf("scenarios: lpsfed sim: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	for i, e := range errs {
		if e != nil {
			return res, fmt.Errorf("scenarios: lpsfed sim: client %s: %w", cfg.Clients[i].ID, e)
		}
	}
	return res, nil
}

// newLPSFedClient builds client i's model, privacy gate (over a JetStream
// ledger on its own connection) and agent.
func newLPSFedClient(ctx context.Context, cfg LPSFedSimConfig, pc LPSFedClient, i int,
	connect func(string) (*bus.NATSTransport, error)) (*agent.Agent, error) {
	mc := cfg.Model
	mc.Loss = lpsfed.LossFor(cfg.Algo)
	mc.Seed = cfg.Seed*1000003 + uint64(i) + 1
	m, err := lpsfed.NewModel(pc.Data, pc.Vectors, mc)
	if err != nil {
		return nil, fmt.Errorf("scenarios: lpsfed sim: client %s: %w", pc.ID, err)
	}
	tr, err := connect(pc.ID)
	if err != nil {
		return nil, err
	}
	ledger, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), cfg.Job, bus.JSLedgerOptions{})
	if err != nil {
		return nil, fmt.Errorf("scenarios: lpsfed sim: client %s: %w", pc.ID, err)
	}
	p := cfg.Privacy
	if p.Delta == 0 {
		p.Delta = 1e-4
	}
	var seed *uint64
	if p.NoiseSeed != nil {
		s := *p.NoiseSeed*7919 + uint64(i)
		seed = &s
	}
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: cfg.Job, Client: pc.ID, Delta: p.Delta, Budget: p.Budget,
		Accountant: p.Accountant, Seed: seed}, ledger, nil)
	if err != nil {
		return nil, fmt.Errorf("scenarios: lpsfed sim: client %s: %w", pc.ID, err)
	}
	log := cfg.Log.With().Str("client", pc.ID).Logger()
	l, err := lpsfed.NewLearner(lpsfed.LearnerConfig{Strict: cfg.Strict, Log: log}, m, pc.Kernel)
	if err != nil {
		return nil, fmt.Errorf("scenarios: lpsfed sim: %w", err)
	}
	evalEvery := cfg.EvalEvery
	if evalEvery == 0 {
		evalEvery = -1 // final scores only
	}
	c, err := agent.New(agent.Config{Job: cfg.Job, Client: pc.ID, LocalEpochs: cfg.LocalEpochs, EvalEvery: evalEvery,
		ModelSigma: p.ModelSigma, ModelClip: p.ModelClip, Log: log}, tr, l, gate)
	if err != nil {
		return nil, fmt.Errorf("scenarios: lpsfed sim: %w", err)
	}
	return c, nil
}

// jobLedger reads the job's whole privacy ledger back.
func jobLedger(ctx context.Context, tr *bus.NATSTransport, job string) ([]privacy.Entry, error) {
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return l.Entries(ctx)
}
