package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// hostileAgentScenario runs a real job on an embedded NATS server twice,
// once clean and once with a hostile party, mallory, that joins properly
// and then sends garbage, an envelope of an unknown schema version, an
// oversized message, another bank's name, a stranger's name, an impossible
// round, a wrong shape, NaN parameters, a forged round opening (to the
// agents) and replays of an honest bank's updates. Every message must be
// rejected and counted with its own reason (replays by the round logic,
// the rest by the bus validators), mallory must never count, and the final
// model must be bit-identical to the clean run's.
func hostileAgentScenario() Scenario {
	const name = "hostile-agent"
	return Scenario{
		Name: name,
		Doc:  "a hostile party on real NATS: garbage, NaN, replays, oversized, wrong shapes, forged names; all rejected and counted, result unchanged",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			// Room above the validators' 64 MiB limit, so that the oversized
			// message reaches them instead of being refused by the server.
			srv, err := bus.StartServer(bus.ServerOptions{MaxPayload: bus.DefaultMaxPayload + 16<<20, NoJetStream: true})
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			defer srv.Shutdown()
			clean, err := runHostileJob(ctx, srv.ClientURL(), "hostile-clean", o, false)
			if err != nil {
				return fail(name, InvNoProgress, "clean job: %v", err), nil
			}
			attacked, err := runHostileJob(ctx, srv.ClientURL(), "hostile", o, true)
			if err != nil {
				return fail(name, InvNoProgress, "attacked job: %v", err), nil
			}
			return judgeHostile(name, clean, attacked), nil
		},
	}
}

const (
	hostileBanks  = 3
	hostileRounds = 6
	malloryID     = "mallory"
)

type hostileRun struct {
	agg    aggregator.Result
	agents []agent.Result
	sent   map[string]int // messages mallory sent, by the reject reason they must earn
	replay int            // honest updates mallory replayed
}

// runHostileJob runs the aggregator and the honest banks, and mallory when
// attack is set.
func runHostileJob(ctx context.Context, url, job string, o ScenarioOptions, attack bool) (hostileRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var trs []*bus.NATSTransport
	defer func() {
		for _, t := range trs {
			t.Close()
		}
	}()
	connect := func(name string) (*bus.NATSTransport, error) {
		nc, err := bus.Connect(url, bus.ConnectOptions{Name: name})
		if err != nil {
			return nil, err
		}
		t := bus.NewNATSTransport(nc, true)
		trs = append(trs, t)
		return t, nil
	}
	aggTr, err := connect("aggregator")
	if err != nil {
		return hostileRun{}, err
	}
	// A quorum of the honest banks and a distant deadline: every round
	// closes with exactly them, so the clean and attacked runs are
	// comparable bit for bit.
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: job, InitSeed: o.Seed, FinalWait: 300 * time.Millisecond, Log: o.Log,
		MaxBytes: hostileMaxBytes,
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: hostileRounds, MinClients: hostileBanks,
			Quorum: hostileBanks, RoundTimeout: time.Minute}}, aggTr)
	if err != nil {
		return hostileRun{}, err
	}
	agents := make([]*agent.Agent, hostileBanks)
	var schema string
	var nparams int
	for i := range agents {
		id := ClientID(i)
		tr, err := connect(id)
		if err != nil {
			return hostileRun{}, err
		}
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: o.Seed*31 + uint64(i)})
		if err != nil {
			return hostileRun{}, err
		}
		schema, nparams = l.SchemaHash(), l.NumParams()
		noise := o.Seed*7919 + uint64(i)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: job, Client: id, Delta: 1e-4, Seed: &noise}, privacy.NewMemLedger(), nil)
		if err != nil {
			return hostileRun{}, err
		}
		// The pause keeps the job running while mallory's messages arrive.
		if agents[i], err = agent.New(agent.Config{Job: job, Client: id, LocalEpochs: 2, Slowdown: 60 * time.Millisecond,
			ModelSigma: 0.01, ModelClip: 10, Log: o.Log}, tr, l, gate); err != nil {
			return hostileRun{}, err
		}
	}
	run := hostileRun{agents: make([]agent.Result, hostileBanks)}
	errs := make([]error, hostileBanks+1)
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.agents[i], errs[i] = a.Run(ctx)
		}()
	}
	var m *mallory
	if attack {
		tr, err := connect(malloryID)
		if err != nil {
			return hostileRun{}, err
		}
		m = &mallory{tr: tr, job: job, schema: schema, nparams: nparams, sent: map[string]int{}}
		if err := m.lurk(); err != nil {
			return hostileRun{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[hostileBanks] = m.attack(ctx)
		}()
	}
	run.agg, err = srv.Run(ctx)
	if err != nil {
		cancel()
	}
	wg.Wait()
	if m != nil {
		run.sent, run.replay = m.counts()
	}
	return run, errors.Join(append(errs, err)...)
}

// judgeHostile compares the attacked run with the clean one.
func judgeHostile(name string, clean, att hostileRun) Outcome {
	got, want := att.agg.Rejects, att.sent
	reasons := map[string]bool{}
	for r := range got {
		reasons[r] = true
	}
	for r := range want {
		reasons[r] = true
	}
	for _, r := range sortedKeys(reasons) {
		if int(got[r]) != want[r] {
			return fail(name, InvNotRejected, "aggregator counted %d rejects for %q, mallory sent %d such messages (all: %v)", got[r], r, want[r], got)
		}
	}
	if len(clean.agg.Rejects) > 0 {
		return fail(name, InvNotRejected, "the clean run rejected %v", clean.agg.Rejects)
	}
	dropped := att.agg.Dropped["duplicate"] + att.agg.Dropped["late"] + att.agg.Dropped["finished"]
	if att.replay == 0 || dropped == 0 || dropped > att.replay || len(att.agg.Dropped) > 3 {
		return fail(name, InvNotRejected, "%d replays sent, round logic dropped %v", att.replay, att.agg.Dropped)
	}
	for i, a := range att.agents {
		if a.Rejects[bus.ReasonSender] == 0 {
			return fail(name, InvNotRejected, "%s did not reject mallory's forged round opening: %v", ClientID(i), a.Rejects)
		}
	}
	for _, rc := range att.agg.Closes {
		if len(rc.In) != hostileBanks || slices.Contains(rc.In, malloryID) || len(rc.Stale) > 0 {
			return fail(name, InvResultChanged, "round %d counted %v (stale %v), want the %d honest banks", rc.Round, rc.In, rc.Stale, hostileBanks)
		}
	}
	if len(att.agg.Closes) != hostileRounds || len(clean.agg.Closes) != hostileRounds {
		return fail(name, InvNoProgress, "%d and %d of %d rounds closed", len(clean.agg.Closes), len(att.agg.Closes), hostileRounds)
	}
	a, b := clean.agg.Model, att.agg.Model
	same := len(a) == len(b) && len(a) > 0
	for i := 0; same && i < len(a); i++ {
		same = math.Float32bits(a[i]) == math.Float32bits(b[i])
	}
	if !same {
		return fail(name, InvResultChanged, "final model %v under attack, %v without", b, a)
	}
	out := Outcome{Name: name, Metrics: map[string]float64{"replays": float64(att.replay), "replays_dropped": float64(dropped)}}
	for r, n := range got {
		out.Metrics["rejected_"+r] = float64(n)
	}
	return out
}
