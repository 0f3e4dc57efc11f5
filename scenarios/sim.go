package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/graph"
	"graphfed/privacy"
)

// SimPrivacy configures every agent's privacy gate.
type SimPrivacy struct {
	Delta      float64
	Budget     privacy.Budget
	Accountant privacy.AccountantKind
	ModelSigma float64
	ModelClip  float64
	GradSigma  float64 // σ2 on gradient estimators (CE-FedGNN)
	EmbSigma   float64 // σ0 on normalized embeddings; negative: no exchange
	// NoiseSeed fixes the noise for a reproducible simulation and marks every
	// ledger entry non-private; nil draws noise from crypto/rand.
	NoiseSeed *uint64
	// ExportLedger, if set, is a file the whole job's ledger is copied to
	// after the run (the JetStream ledger of an embedded server is gone
	// once it stops), for graphfed audit --ledger.
	ExportLedger string
}

// SimConfig describes an in-process federated job on node classification.
type SimConfig struct {
	Job     string
	Algo    string // aggregator.AlgoFedAvg or AlgoLocal
	Clients []*graph.ClientGraph
	Node    agent.NodeConfig
	// Learners, when set, are the clients' learners (one per client, ids
	// from IDs or ClientID(i)); Clients and Node are then ignored.
	Learners     []agent.Learner
	IDs          []string
	Rounds       int
	LocalEpochs  int
	EvalEvery    int // agents score their starting model every this many rounds; default 1
	RoundTimeout time.Duration
	Quorum       int
	Staleness    aggregator.Staleness
	Seed         uint64
	// NATSURL names an external server or cluster; empty starts an embedded
	// server for the run.
	NATSURL string
	// Slowdown delays given clients (by index) every round.
	Slowdown map[int]time.Duration
	// SlowFactor makes given clients (by index) that many times slower.
	SlowFactor map[int]float64
	// Buffer > 0 aggregates every Buffer updates (FedBuff) instead of
	// waiting for the quorum.
	Buffer  int
	Privacy SimPrivacy
	Log     zerolog.Logger
	// OnRound is called after every close decision with the clients' scores
	// of the model the round started from.
	OnRound func(rc aggregator.RoundClosed, scores map[string]map[string]float64)
	// OnProgress, if set, is called after every close decision with the
	// traffic and privacy spending so far.
	OnProgress func(rc aggregator.RoundClosed, p Progress)
}

// Progress is a running job's traffic and privacy spending.
type Progress struct {
	Messages, Bytes int64 // published by every party so far
	// ClientEpsilon is the largest ε of a client's model and gradient
	// releases composed; NodeEpsilonP90 the largest per-node embedding ε at
	// its bank's 90th-percentile metric distance ρ (0 before the first
	// calibration). Both at the job's δ.
	ClientEpsilon, NodeEpsilonP90 float64
}

// progress sums the transports' traffic and the gates' spending.
func progress(transports []bus.Transport, gates []*privacy.Gate) Progress {
	var p Progress
	for _, t := range transports {
		m, b := t.Stats()
		p.Messages += m
		p.Bytes += b
	}
	for _, g := range gates {
		rho, ok := g.RhoAt(90)
		if !ok {
			rho = math.NaN()
		}
		sp := g.Spent(rho)
		p.ClientEpsilon = max(p.ClientEpsilon, sp.Client)
		if ok {
			p.NodeEpsilonP90 = max(p.NodeEpsilonP90, sp.WorstNode)
		}
	}
	return p
}

// SimResult is a finished simulation.
type SimResult struct {
	Agg      aggregator.Result
	Agents   []agent.Result
	Messages int64 // published by every party, replies included
	Bytes    int64
	Seconds  float64
	// Ledger is every entry of the job's privacy ledger, in order.
	Ledger []privacy.Entry
}

// ClientID names client i of a simulation.
func ClientID(i int) string { return fmt.Sprintf("client-%d", i) }

// RunSim runs the aggregator and one agent per client on one bus and waits
// for the job to finish.
func RunSim(ctx context.Context, cfg SimConfig) (SimResult, error) {
	start := time.Now()
	learners, ids, err := simLearners(cfg)
	if err != nil {
		return SimResult{}, err
	}
	url := cfg.NATSURL
	if url == "" {
		srv, err := bus.StartServer(bus.ServerOptions{})
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
		}
		defer srv.Shutdown()
		url = srv.ClientURL()
		cfg.Log.Info().Str("url", url).Msg("embedded nats-server started")
	}
	var transports []bus.Transport
	connect := func(name string) (*bus.NATSTransport, error) {
		nc, err := bus.Connect(url, bus.ConnectOptions{Name: name})
		if err != nil {
			return nil, err
		}
		t := bus.NewNATSTransport(nc, true)
		transports = append(transports, t)
		return t, nil
	}
	defer func() {
		for _, t := range transports {
			t.Close()
		}
	}()
	aggTr, err := connect("aggregator")
	if err != nil {
		return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
	}
	var srv *aggregator.Server
	var gates []*privacy.Gate
	srv, err = aggregator.NewServer(aggregator.ServerConfig{
		Job: cfg.Job, InitSeed: cfg.Seed, Log: cfg.Log,
		Round: aggregator.Config{Algo: cfg.Algo, Rounds: cfg.Rounds, MinClients: len(learners),
			Quorum: cfg.Quorum, RoundTimeout: cfg.RoundTimeout, Staleness: cfg.Staleness, Buffer: cfg.Buffer},
		OnRound: func(rc aggregator.RoundClosed) {
			if cfg.OnRound != nil {
				cfg.OnRound(rc, srv.RoundScores(rc.Round))
			}
			if cfg.OnProgress != nil {
				cfg.OnProgress(rc, progress(transports, gates))
			}
		},
	}, aggTr)
	if err != nil {
		return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
	}
	agents := make([]*agent.Agent, len(learners))
	for i, l := range learners {
		tr, err := connect(ids[i])
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
		}
		gate, err := newSimGate(ctx, cfg, tr, ids[i], i)
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
		}
		gates = append(gates, gate)
		agents[i], err = agent.New(agent.Config{Job: cfg.Job, Client: ids[i], LocalEpochs: cfg.LocalEpochs, EvalEvery: cfg.EvalEvery,
			Slowdown: cfg.Slowdown[i], SlowFactor: cfg.SlowFactor[i], ModelSigma: cfg.Privacy.ModelSigma, ModelClip: cfg.Privacy.ModelClip,
			GradSigma: cfg.Privacy.GradSigma, EmbSigma: cfg.Privacy.EmbSigma,
			Log: cfg.Log.With().Str("client", ids[i]).Logger()}, tr, l, gate)
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
		}
	}
	res := SimResult{Agents: make([]agent.Result, len(agents))}
	errs := make([]error, len(agents))
	actx, cancelAgents := context.WithCancel(ctx)
	defer cancelAgents()
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Agents[i], errs[i] = a.Run(actx)
		}()
	}
	res.Agg, err = srv.Run(ctx)
	if err != nil {
		cancelAgents()
		wg.Wait()
		return res, fmt.Errorf("scenarios: sim: %w", err)
	}
	wg.Wait()
	for _, t := range transports {
		m, b := t.Stats()
		res.Messages += m
		res.Bytes += b
	}
	res.Ledger, err = readLedger(ctx, aggTr, cfg)
	if err != nil {
		return res, fmt.Errorf("scenarios: sim: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	for i, e := range errs {
		if e != nil {
			return res, fmt.Errorf("scenarios: sim: client %d: %w", i, e)
		}
	}
	return res, nil
}

// newSimGate builds client i's privacy gate over a JetStream ledger on its
// own connection: the entry is stored (acknowledged) before the release is
// published.
func newSimGate(ctx context.Context, cfg SimConfig, tr *bus.NATSTransport, client string, i int) (*privacy.Gate, error) {
	ledger, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), cfg.Job, bus.JSLedgerOptions{})
	if err != nil {
		return nil, err
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
	return privacy.NewGate(ctx, privacy.Config{Job: cfg.Job, Client: client, Delta: p.Delta, Budget: p.Budget,
		Accountant: p.Accountant, Seed: seed}, ledger, nil)
}

// readLedger reads the job's whole ledger and, if asked, copies it to a file.
func readLedger(ctx context.Context, tr *bus.NATSTransport, cfg SimConfig) ([]privacy.Entry, error) {
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), cfg.Job, bus.JSLedgerOptions{})
	if err != nil {
		return nil, err
	}
	entries, err := l.Entries(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Privacy.ExportLedger == "" {
		return entries, nil
	}
	// The export is a copy of this run's stream: a previous run's file in the
	// same place is replaced, not appended to.
	if err := os.MkdirAll(filepath.Dir(cfg.Privacy.ExportLedger), 0o755); err != nil {
		return entries, err
	}
	if err := os.Remove(cfg.Privacy.ExportLedger); err != nil && !errors.Is(err, os.ErrNotExist) {
		return entries, err
	}
	fl, err := privacy.OpenFileLedger(cfg.Privacy.ExportLedger)
	if err != nil {
		return entries, err
	}
	defer fl.Close()
	for _, e := range entries {
		if err := fl.Append(ctx, e); err != nil {
			return entries, err
		}
	}
	return entries, nil
}

// simLearners returns the clients' learners and ids: the given ones, or a
// NodeLearner per client graph.
func simLearners(cfg SimConfig) ([]agent.Learner, []string, error) {
	if len(cfg.Learners) > 0 {
		ids := cfg.IDs
		if ids == nil {
			for i := range cfg.Learners {
				ids = append(ids, ClientID(i))
			}
		}
		if len(ids) != len(cfg.Learners) {
			return nil, nil, fmt.Errorf("scenarios: sim: %d ids for %d learners", len(ids), len(cfg.Learners))
		}
		return cfg.Learners, ids, nil
	}
	if len(cfg.Clients) == 0 {
		return nil, nil, errors.New("scenarios: sim: no clients")
	}
	learners := make([]agent.Learner, len(cfg.Clients))
	ids := make([]string, len(cfg.Clients))
	for i, cg := range cfg.Clients {
		nc := cfg.Node
		nc.Seed = cfg.Seed*1000003 + uint64(i) + 1
		l, err := agent.NewNodeLearner(cg.Data, nc)
		if err != nil {
			return nil, nil, fmt.Errorf("scenarios: sim: client %d: %w", i, err)
		}
		learners[i], ids[i] = l, ClientID(i)
	}
	return learners, ids, nil
}
