package agent_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// A received model outside what the job can produce is refused: the agent
// keeps its last good model, trains on from it exactly as if the bad one
// never came, counts it and says so once per round.
func TestMachineRefusesModelsOutsideTheJob(t *testing.T) {
	huge := float32(1e30)
	good := agent.ModelIn{Round: 1, Params: []float32{0.1, 0.2, 0.3, 0.4, 0.5}, Now: mat(3)}
	tests := []struct {
		name  string
		bad   []agent.ModelIn // received after the good model of round 1
		notes int
	}{
		{"nothing bad", nil, 0},
		{"every parameter 1e30", []agent.ModelIn{{Round: 2, Params: []float32{huge, huge, huge, huge, huge}, Now: mat(3.5)}}, 1},
		{"just above the bound", []agent.ModelIn{{Round: 2, Params: []float32{480, 0, 0, 0, 0}, Now: mat(3.5)}}, 1},
		{"a huge gradient estimator", []agent.ModelIn{{Round: 2, Params: good.Params, Grad: []float32{0, 0, huge, 0, 0}, Now: mat(3.5)}}, 1},
		// The learner shares no estimator: loading one used to stop the
		// agent (the by-hand re-run's attack 2g).
		{"a gradient estimator the learner shares none of", []agent.ModelIn{{Round: 2, Params: good.Params, Grad: []float32{0, 0, 0.01, 0, 0}, Now: mat(3.5)}}, 1},
		{"twice in a round, said once", []agent.ModelIn{
			{Round: 2, Params: []float32{huge, 0, 0, 0, 0}, Now: mat(3.5)},
			{Round: 2, Params: []float32{0, huge, 0, 0, 0}, Now: mat(3.6)}}, 1},
	}
	run := func(t *testing.T, bad []agent.ModelIn) (agent.PublishUpdate, int, uint64) {
		m, _ := newMachine(t, nil, 0)
		boot(t, m, 0, 0)
		step(t, m, agent.JoinReply{Accepted: true, Algo: "fedavg", InitSeed: 3, Now: mat(1)})
		step(t, m, agent.RoundOpened{Round: 1, Now: mat(2)})
		step(t, m, good)
		notes := 0
		for _, b := range bad {
			for _, a := range step(t, m, b) {
				if n, ok := a.(agent.Note); ok && n.Warn {
					notes++
				}
			}
		}
		up := only[agent.PublishUpdate](t, step(t, m, agent.RoundOpened{Round: 2, ModelRound: 1, Now: mat(4)}))
		return up, notes, m.BadModels()
	}
	clean, _, _ := run(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up, notes, bad := run(t, tc.bad)
			if notes != tc.notes || bad != uint64(len(tc.bad)) {
				t.Fatalf("%d notes and %d refused, want %d and %d", notes, bad, tc.notes, len(tc.bad))
			}
			a, b := clean.Update.Params.Floats(), up.Update.Params.Floats()
			if up.Update.BaseRound != 1 || len(a) != len(b) {
				t.Fatalf("round 2 update %+v", up.Update)
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("round 2 trained from another model: %v, want %v", b, a)
				}
			}
		})
	}
}

// badModels is the aggregator's transport with a model of 1e30s, as a
// party posing as the aggregator would send it (no keyring: the agents
// take unsigned envelopes), published just before each round opening, so
// that every agent receives one before the round and the job's end.
type badModels struct {
	bus.Transport
}

func (b badModels) Publish(ctx context.Context, subject string, data []byte) error {
	if subject == bus.Subject("job", bus.KindRound) {
		env, err := bus.Open(data)
		if err != nil {
			return err
		}
		bad, err := bus.Seal(bus.Envelope{Job: "job", Kind: bus.KindModel, From: bus.AggregatorID, Round: env.Round, Seq: 1<<40 + env.Round,
			Time: time.Now().UnixNano()}, &bus.Model{Round: env.Round, Params: []float32{1e30, 1e30}})
		if err != nil {
			return err
		}
		if err := b.Transport.Publish(ctx, bus.Subject("job", bus.KindModel, "all"), bad); err != nil {
			return err
		}
	}
	return b.Transport.Publish(ctx, subject, data)
}

// runWithBadModels runs a FedAvg job of two mean learners on an in-memory
// bus, with the bad models when inject is set.
func runWithBadModels(t *testing.T, inject bool) run {
	t.Helper()
	net := bus.NewInmemNetwork()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr bus.Transport = net.Transport()
	if inject {
		tr = badModels{tr}
	}
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: "job", InitSeed: 3, FinalWait: 2 * time.Second, Log: zerolog.Nop(),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 3, MinClients: 2, RoundTimeout: 10 * time.Second}}, tr)
	if err != nil {
		t.Fatal(err)
	}
	clients := []*meanLearner{{target: []float32{1, 2}, n: 10}, {target: []float32{3, 4}, n: 30}}
	var out run
	out.agents, out.errs = make([]agent.Result, len(clients)), make([]error, len(clients))
	var wg sync.WaitGroup
	for i, l := range clients {
		seed := uint64(i)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: "job", Client: fmt.Sprintf("c%d", i), Delta: 1e-4, Seed: &seed}, privacy.NewMemLedger(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Job: "job", Client: fmt.Sprintf("c%d", i), LocalEpochs: 1, HelloRetry: 200 * time.Millisecond,
			ModelClip: 15, Log: zerolog.Nop()}, net.Transport(), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { out.agents[i], out.errs[i] = a.Run(ctx) })
	}
	if out.agg, err = srv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return out
}

// Models of 1e30s from a party posing as the aggregator: every agent
// refuses them and counts them (norm), none dies, and the job ends where
// the undisturbed one does, bit for bit.
func TestAgentRefusesBadModelsAndGoesOn(t *testing.T) {
	clean, att := runWithBadModels(t, false), runWithBadModels(t, true)
	for i, r := range att.agents {
		if att.errs[i] != nil || clean.errs[i] != nil {
			t.Fatalf("agent %d: %v (clean: %v)", i, att.errs[i], clean.errs[i])
		}
		if r.Rejects[bus.ReasonNorm] == 0 || clean.agents[i].Rejects[bus.ReasonNorm] != 0 {
			t.Fatalf("agent %d counted %v (clean run: %v)", i, r.Rejects, clean.agents[i].Rejects)
		}
		if r.Rounds != 3 {
			t.Fatalf("agent %d trained %d rounds", i, r.Rounds)
		}
	}
	a, b := clean.agg.Model, att.agg.Model
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("models %v and %v", a, b)
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("final model %v with the bad models, %v without", b, a)
		}
	}
}
