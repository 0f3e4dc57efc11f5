package bus_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

// restartRun is a one-bank FedAvg job on a real embedded server, the bank's
// ledger the job's JetStream ledger behind a FaultLedger and a RetryLedger.
type restartRun struct {
	agg     aggregator.Result
	res     agent.Result
	err     error
	entries []privacy.Entry
	retries int
	stopped bool // the server was stopped during an append and started again
}

// runOnServer runs the job; with restartAt > 0 the server stops just as
// the bank's restartAt-th append is sent, and starts again on its store
// and port at the first retry's pause.
func runOnServer(t *testing.T, restartAt int) restartRun {
	t.Helper()
	dir := t.TempDir()
	srv, err := bus.StartServer(bus.ServerOptions{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards srv and out.stopped
	t.Cleanup(func() { mu.Lock(); srv.Shutdown(); mu.Unlock() })
	u, err := url.Parse(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	connect := func(name string) *bus.NATSTransport {
		nc, err := bus.Connect(srv.ClientURL(), bus.ConnectOptions{Name: name, ReconnectWait: 50 * time.Millisecond, MaxReconnects: -1})
		if err != nil {
			t.Fatal(err)
		}
		tr := bus.NewNATSTransport(nc, true)
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	const job, id = "retry-job", "bank-1"
	// No deadline on the parties' context, as under `graphfed agent`: the
	// ledger's own timeout bounds each append's first attempt (with a
	// deadline there, the JetStream ledger would repeat its publish up to
	// it). The timer only keeps a broken run from hanging the test.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := time.AfterFunc(2*time.Minute, cancel)
	defer stop.Stop()
	aggTr, bankTr := connect("aggregator"), connect(id)
	jsl, err := bus.OpenJetStreamLedger(ctx, bankTr.Conn(), job, bus.JSLedgerOptions{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var out restartRun
	faults := ledgertest.NewFaultLedger(jsl, ledgertest.Faults{Before: func(n int, e privacy.Entry) {
		if n == restartAt {
			mu.Lock()
			srv.Shutdown()
			mu.Unlock()
		}
	}})
	rl, err := bus.NewRetryLedger(faults, bus.LedgerRetry{Seed: 1, Transient: jsl.Transient, Log: zerolog.Nop(),
		OnRetry: func(privacy.Entry, int, error) { out.retries++ },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			if restartAt > 0 && !out.stopped {
				s, err := bus.StartServer(bus.ServerOptions{StoreDir: dir, Port: port})
				if err != nil {
					mu.Unlock()
					return fmt.Errorf("restart: %w", err)
				}
				srv, out.stopped = s, true
				mu.Unlock()
				// Updates go over core NATS here (no durable update
				// stream): the one the bank sends after this append
				// reaches the aggregator only once its subscriptions are
				// back on the server. Not the ledger's business; wait.
				for !aggTr.Conn().IsConnected() {
					if err := ctx.Err(); err != nil {
						return err
					}
					time.Sleep(10 * time.Millisecond)
				}
				if err := aggTr.Conn().FlushTimeout(30 * time.Second); err != nil {
					return fmt.Errorf("aggregator after the restart: %w", err)
				}
				mu.Lock()
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
				return nil
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	seed := uint64(9)
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: job, Client: id, Delta: 1e-4, Seed: &seed}, rl, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	lr, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: 1, DataSeed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Job: job, Client: id, LocalEpochs: 1, HelloRetry: 200 * time.Millisecond, Log: zerolog.Nop()}, bankTr, lr, gate)
	if err != nil {
		t.Fatal(err)
	}
	as, err := aggregator.NewServer(aggregator.ServerConfig{Job: job, InitSeed: 3, FinalWait: 5 * time.Second, Log: zerolog.Nop(),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 3, MinClients: 1, RoundTimeout: time.Minute}}, aggTr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		out.res, out.err = a.Run(ctx)
	}()
	if out.agg, err = as.Run(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if out.entries, err = jsl.Entries(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

// The server stops while the bank's round-2 release is being appended and
// starts again on its store: the append is retried until the server is
// back, the release goes out after it, and the bank goes on to finish the
// job with the ledger and model of a run without the restart.
func TestAgentGoesOnAcrossServerRestartDuringAppend(t *testing.T) {
	ref := runOnServer(t, 0)
	if ref.err != nil || ref.res.Rounds != 3 || len(ref.entries) != 3 {
		t.Fatalf("clean run: %v, %d rounds, %d entries", ref.err, ref.res.Rounds, len(ref.entries))
	}
	got := runOnServer(t, 2)
	if !got.stopped || got.retries == 0 {
		t.Fatalf("no restart during an append (stopped %v, %d retries)", got.stopped, got.retries)
	}
	if got.err != nil || got.res.Rounds != 3 || got.agg.Rounds != 3 {
		t.Fatalf("agent: %v, %d rounds; aggregator %d rounds", got.err, got.res.Rounds, got.agg.Rounds)
	}
	if !reflect.DeepEqual(got.entries, ref.entries) {
		t.Fatalf("ledger\n%+v\nwant\n%+v", got.entries, ref.entries)
	}
	if !reflect.DeepEqual(got.agg.Model, ref.agg.Model) {
		t.Fatalf("model %v, want %v", got.agg.Model, ref.agg.Model)
	}
	for _, c := range got.agg.Closes {
		if len(c.In) != 1 {
			t.Fatalf("round %d closed (%s) without the bank", c.Round, c.Reason)
		}
	}
}
