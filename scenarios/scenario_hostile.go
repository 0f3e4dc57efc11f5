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
	"graphfed/deploy"
	"graphfed/seeds"
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
			srv, err := bus.StartServer(bus.ServerOptions{MaxPayload: bus.DefaultMaxPayload + 16<<20})
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

// runHostileJob runs the aggregator and the honest banks, built by deploy
// on the server at url, and mallory when attack is set.
func runHostileJob(ctx context.Context, url, job string, o ScenarioOptions, attack bool) (hostileRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var schema string
	var nparams int
	jo := deploy.JobOptions{Local: deploy.LocalOptions{Job: job, URL: url},
		// A quorum of the honest banks and a distant deadline: every round
		// closes with exactly them, so the clean and attacked runs are
		// comparable bit for bit.
		Aggregator: deploy.AggregatorOptions{Task: deploy.TaskNode, InitSeed: o.Seed, FinalWait: 300 * time.Millisecond,
			Log: o.Log, MaxBytes: hostileMaxBytes,
			Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: hostileRounds, MinClients: hostileBanks,
				Quorum: hostileBanks, RoundTimeout: time.Minute}}}
	for i := range hostileBanks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
		if err != nil {
			return hostileRun{}, err
		}
		schema, nparams = l.SchemaHash(), l.NumParams()
		// The pause keeps the job running while mallory's messages arrive.
		jo.Agents = append(jo.Agents, deploy.AgentOptions{ID: deploy.ClientID(i), Learner: l, LocalEpochs: 2,
			Slowdown: 60 * time.Millisecond, Privacy: logisticPrivacy(o.Seed, i), Log: o.Log})
	}
	parties, err := deploy.StartJob(ctx, jo)
	if err != nil {
		return hostileRun{}, err
	}
	defer parties.Close()
	var m *mallory
	var merr error
	var wg sync.WaitGroup
	if attack {
		nc, err := bus.Connect(url, bus.ConnectOptions{Name: malloryID})
		if err != nil {
			return hostileRun{}, err
		}
		tr := bus.NewNATSTransport(nc, true)
		defer tr.Close()
		m = &mallory{tr: tr, job: job, schema: schema, nparams: nparams, sent: map[string]int{}}
		if err := m.lurk(); err != nil {
			return hostileRun{}, err
		}
		wg.Go(func() { merr = m.attack(ctx) })
	}
	jr, err := parties.Run(ctx)
	if err != nil {
		cancel()
	}
	wg.Wait()
	run := hostileRun{agg: jr.Aggregator, agents: jr.Agents}
	if m != nil {
		run.sent, run.replay = m.counts()
	}
	return run, errors.Join(err, merr)
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
			return fail(name, InvNotRejected, "%s did not reject mallory's forged round opening: %v", deploy.ClientID(i), a.Rejects)
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
