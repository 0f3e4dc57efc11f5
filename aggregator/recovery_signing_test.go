package aggregator_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// lossyTransport drops the first message published on one subject, as a
// NATS server restart drops what core NATS had in flight.
type lossyTransport struct {
	*bus.InmemTransport
	subject string
	dropped atomic.Int32
}

func (t *lossyTransport) Publish(ctx context.Context, subject string, data []byte) error {
	if subject == t.subject && t.dropped.CompareAndSwap(0, 1) {
		return nil
	}
	return t.InmemTransport.Publish(ctx, subject, data)
}

// A round announcement lost on the way is announced again after a quiet
// spell: the round closes at quorum long before its deadline.
func TestReannounceRecoversALostRound(t *testing.T) {
	net := bus.NewInmemNetwork()
	tr := &lossyTransport{InmemTransport: net.Transport(), subject: bus.Subject("lossy", bus.KindRound)}
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: "lossy", FinalWait: time.Second, Log: zerolog.Nop(),
		Reannounce: 100 * time.Millisecond,
		Round:      aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 2, MinClients: 2, RoundTimeout: time.Minute}}, tr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, id := range []string{"a", "b"} {
		l, _ := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 2, Samples: 8, TaskSeed: 1, DataSeed: uint64(i)})
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: "lossy", Client: id, Delta: 1e-4}, privacy.NewMemLedger(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Job: "lossy", Client: id, HelloRetry: 50 * time.Millisecond, Log: zerolog.Nop()},
			net.Transport(), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		go a.Run(ctx)
	}
	res, err := srv.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.dropped.Load() != 1 {
		t.Fatal("no announcement was dropped")
	}
	if len(res.Closes) != 2 || res.Closes[0].Reason != "quorum" || res.Closes[0].Duration > 5*time.Second {
		t.Fatalf("closes %+v: the lost round waited for its deadline", res.Closes)
	}
}

// An agent with a keyring refuses a hello reply that claims the
// aggregator but carries another party's signature: counted, not joined.
func TestAgentRefusesForgedHelloReply(t *testing.T) {
	dep, err := bus.NewDeployment("signed", []string{"bank-a", "bank-b"})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := dep.Keyring()
	cred, _ := dep.Credential("bank-b")
	kp, err := nkeys.FromSeed(cred.Seed)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := bus.NewSigner(bus.AggregatorID, kp) // bank-b's key, the aggregator's name
	if err != nil {
		t.Fatal(err)
	}
	net := bus.NewInmemNetwork()
	fake := net.Transport()
	sub, err := fake.Subscribe(func(m bus.Msg) {
		data, _ := forger.Seal(bus.Envelope{Job: "signed", Kind: bus.KindHello, From: bus.AggregatorID},
			&bus.HelloReply{Accepted: true, Algo: aggregator.AlgoFedAvg, Rounds: 1})
		fake.Respond(m, data)
	}, bus.Subject("signed", bus.KindHello, "*"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, _ := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 2, Samples: 8})
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: "signed", Client: "bank-a", Delta: 1e-4}, privacy.NewMemLedger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Job: "signed", Client: "bank-a", Keyring: ring, Log: zerolog.Nop()}, net.Transport(), l, gate)
	if err != nil {
		t.Fatal(err)
	}
	// Refused and counted, not joined: the agent keeps asking (a forged
	// reply is no answer, and never its end) until its context ends.
	res, err := a.Run(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || res.Rejects[bus.ReasonSignature] == 0 || res.Rounds != 0 {
		t.Fatalf("agent on forged replies: %v, %d rounds, rejects %v; want no join, the forgeries counted, and its context's end", err, res.Rounds, res.Rejects)
	}
}
