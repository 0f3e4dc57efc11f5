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
	"graphfed/graph"
)

// SimConfig describes an in-process federated job on node classification.
type SimConfig struct {
	Job          string
	Algo         string // aggregator.AlgoFedAvg or AlgoLocal
	Clients      []*graph.ClientGraph
	Node         agent.NodeConfig
	Rounds       int
	LocalEpochs  int
	RoundTimeout time.Duration
	Quorum       int
	Staleness    aggregator.Staleness
	Seed         uint64
	// NATSURL names an external server or cluster; empty starts an embedded
	// server for the run.
	NATSURL string
	// Slowdown delays given clients (by index) every round.
	Slowdown map[int]time.Duration
	Log      zerolog.Logger
	// OnRound is called after every close decision with the clients' scores
	// of the model the round started from.
	OnRound func(rc aggregator.RoundClosed, scores map[string]map[string]float64)
}

// SimResult is a finished simulation.
type SimResult struct {
	Agg      aggregator.Result
	Agents   []agent.Result
	Messages int64 // published by every party, replies included
	Bytes    int64
	Seconds  float64
}

// ClientID names client i of a simulation.
func ClientID(i int) string { return fmt.Sprintf("client-%d", i) }

// RunSim runs the aggregator and one agent per client on one bus and waits
// for the job to finish.
func RunSim(ctx context.Context, cfg SimConfig) (SimResult, error) {
	start := time.Now()
	if len(cfg.Clients) == 0 {
		return SimResult{}, errors.New("scenarios: sim: no clients")
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
	connect := func(name string) (bus.Transport, error) {
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
	srv, err = aggregator.NewServer(aggregator.ServerConfig{
		Job: cfg.Job, InitSeed: cfg.Seed, Log: cfg.Log,
		Round: aggregator.Config{Algo: cfg.Algo, Rounds: cfg.Rounds, MinClients: len(cfg.Clients),
			Quorum: cfg.Quorum, RoundTimeout: cfg.RoundTimeout, Staleness: cfg.Staleness},
		OnRound: func(rc aggregator.RoundClosed) {
			if cfg.OnRound != nil {
				cfg.OnRound(rc, srv.RoundScores(rc.Round))
			}
		},
	}, aggTr)
	if err != nil {
		return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
	}
	agents := make([]*agent.Agent, len(cfg.Clients))
	for i, cg := range cfg.Clients {
		nc := cfg.Node
		nc.Seed = cfg.Seed*1000003 + uint64(i) + 1
		l, err := agent.NewNodeLearner(cg.Data, nc)
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: client %d: %w", i, err)
		}
		tr, err := connect(ClientID(i))
		if err != nil {
			return SimResult{}, fmt.Errorf("scenarios: sim: %w", err)
		}
		agents[i], err = agent.New(agent.Config{Job: cfg.Job, Client: ClientID(i), LocalEpochs: cfg.LocalEpochs,
			Slowdown: cfg.Slowdown[i], Log: cfg.Log.With().Str("client", ClientID(i)).Logger()}, tr, l)
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
	res.Seconds = time.Since(start).Seconds()
	for i, e := range errs {
		if e != nil {
			return res, fmt.Errorf("scenarios: sim: client %d: %w", i, e)
		}
	}
	return res, nil
}
