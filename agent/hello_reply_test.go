package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// A hello reply that does not open is no answer: the agent counts it,
// asks again and joins the real aggregator. The replies here are what a
// JetStream stream capturing the hello subject sends (a publish
// acknowledgement), and a random byte string; before, the first such
// reply stopped the agent.
func TestAgentGoesOnAfterBadHelloReplies(t *testing.T) {
	for _, garbage := range [][]byte{[]byte(`{"stream":"SPY","seq":1}`), {0xc1, 0x00, 0xff}} {
		t.Run(fmt.Sprintf("%.8q", garbage), func(t *testing.T) { testBadHelloReplies(t, garbage) })
	}
}

func testBadHelloReplies(t *testing.T, garbage []byte) {
	net := bus.NewInmemNetwork()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The impostor answers every hello until each client has had one bad
	// reply; only then does the aggregator start, so the first answer each
	// client gets is the bad one.
	imp := net.Transport()
	var mu sync.Mutex
	answered := map[string]bool{}
	all := make(chan struct{})
	sub, err := imp.Subscribe(func(m bus.Msg) {
		if imp.Respond(m, garbage) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		p, err := bus.ParseSubject(m.Subject)
		if err == nil && !answered[p.From] {
			answered[p.From] = true
			if len(answered) == 2 {
				close(all)
			}
		}
	}, bus.Subject("job", bus.KindHello, "*"))
	if err != nil {
		t.Fatal(err)
	}
	clients := []*meanLearner{{target: []float32{1, 2}, n: 10}, {target: []float32{3, 4}, n: 30}}
	results := make([]agent.Result, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, l := range clients {
		seed := uint64(i)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: "job", Client: fmt.Sprintf("c%d", i), Delta: 1e-4, Seed: &seed}, privacy.NewMemLedger(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Job: "job", Client: fmt.Sprintf("c%d", i), LocalEpochs: 1, HelloRetry: 100 * time.Millisecond,
			ModelClip: 15, Log: zerolog.Nop()}, net.Transport(), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { results[i], errs[i] = a.Run(ctx) })
	}
	select {
	case <-all:
	case <-ctx.Done():
		t.Fatal("the agents' hellos never reached the impostor")
	}
	sub.Unsubscribe()
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: "job", InitSeed: 3, FinalWait: 2 * time.Second, Log: zerolog.Nop(),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 2, MinClients: 2, RoundTimeout: 10 * time.Second}}, net.Transport())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("agent %d stopped: %v", i, errs[i])
		}
		if r.Rounds != 2 || r.Rejects[bus.ReasonGarbage] == 0 {
			t.Fatalf("agent %d: %d rounds, rejects %v; want 2 rounds and the bad replies counted", i, r.Rounds, r.Rejects)
		}
	}
}
