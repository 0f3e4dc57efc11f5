package aggregator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

const (
	recJob     = "rec"
	recClients = 3
	recRounds  = 3
)

// recEnv is a durable job on an in-memory network: the store and the log
// outlive the servers, as JetStream outlives a killed aggregator.
type recEnv struct {
	net    *bus.InmemNetwork
	store  *aggregator.MemStore
	log    *aggregator.MemUpdateLog
	leases aggregator.MemLeaseStore
	held   *aggregator.Lease // the latest server life's
}

// lease takes the job's run lease for a new server life. The previous
// life's is released first: its crash is the checkpoint's here, and the
// wait for a dead holder's lease to lapse is recovery_lease_test.go's.
func (e *recEnv) lease(t *testing.T, job string) *aggregator.Lease {
	t.Helper()
	if e.held != nil {
		if err := e.held.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run, err := bus.NewRunID(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l, err := aggregator.AcquireLease(context.Background(), &e.leases, aggregator.LeaseConfig{Job: job, Run: run, TTL: time.Minute, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	e.held = l
	t.Cleanup(func() { l.Release(context.Background()) })
	return l
}

func newRecEnv(t *testing.T) *recEnv {
	t.Helper()
	net := bus.NewInmemNetwork()
	log, err := aggregator.NewMemUpdateLog(net.Transport(), recJob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return &recEnv{net: net, store: aggregator.NewMemStore(), log: log}
}

// server builds a server that lives as long as life and that the clients
// of lives say hello to once it listens.
func (e *recEnv) server(t *testing.T, store aggregator.Store, lives *serverLives, life context.Context) (*aggregator.Server, *bus.InmemTransport) {
	t.Helper()
	tr := e.net.Transport()
	srv, err := aggregator.NewServer(aggregator.ServerConfig{
		Job: recJob, InitSeed: 5, FinalWait: time.Second, Log: zerolog.Nop(), Store: store, Updates: e.log, Lease: e.lease(t, recJob),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: recRounds, MinClients: recClients, RoundTimeout: time.Minute},
	}, lives.server(tr, life))
	if err != nil {
		t.Fatal(err)
	}
	return srv, tr
}

// startAgents runs deterministic agents (seeded data, seeded gate noise)
// until the job is done or ctx ends; their hellos go to the servers of
// lives.
func (e *recEnv) startAgents(ctx context.Context, t *testing.T, lives *serverLives) func() []error {
	t.Helper()
	errs := make([]error, recClients)
	var wg sync.WaitGroup
	for i := range recClients {
		id := fmt.Sprintf("c%d", i)
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 3, Samples: 40, TaskSeed: 1, DataSeed: uint64(10 + i)})
		if err != nil {
			t.Fatal(err)
		}
		seed := uint64(100 + i)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: recJob, Client: id, Delta: 1e-4, Seed: &seed}, privacy.NewMemLedger(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Job: recJob, Client: id, HelloRetry: 50 * time.Millisecond, ModelSigma: 0.01, ModelClip: 10,
			Log: zerolog.Nop()}, lives.client(e.net.Transport()), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = a.Run(ctx)
		}()
	}
	return func() []error { wg.Wait(); return errs }
}

// crashingStore is a MemStore that dies at its at-th state write, having
// stored that record first when save is set: a kill -9 just after or just
// before the write. The server must then stop without acting.
type crashingStore struct {
	*aggregator.MemStore
	at    int
	save  bool
	n     int
	crash func()
}

var errCrashed = errors.New("crashed")

func (c *crashingStore) SaveState(ctx context.Context, data []byte) error {
	c.n++
	switch {
	case c.n < c.at:
		return c.MemStore.SaveState(ctx, data)
	case c.n == c.at && c.save:
		c.MemStore.SaveState(ctx, data)
	}
	c.crash()
	return errCrashed
}

// runDurable runs the job with a server that crashes at the at-th
// checkpoint (never when at is 0) and a second one that resumes, and
// returns the final result.
func runDurable(t *testing.T, at int, save bool) (aggregator.Result, *recEnv) {
	t.Helper()
	e := newRecEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lives := newServerLives(ctx)
	wait := e.startAgents(ctx, t, lives)
	sctx, kill := context.WithCancel(ctx)
	defer kill()
	var store aggregator.Store = e.store
	if at > 0 {
		store = &crashingStore{MemStore: e.store, at: at, save: save, crash: kill}
	}
	srv, tr := e.server(t, store, lives, sctx)
	res, err := srv.Run(sctx)
	tr.Close()
	if at > 0 {
		if !errors.Is(err, errCrashed) {
			t.Fatalf("crash at checkpoint %d: the first server ended with %v", at, err)
		}
		srv, _ = e.server(t, e.store, lives, ctx)
		if res, err = srv.Run(ctx); err != nil {
			t.Fatalf("resumed server: %v", err)
		}
		if stored := at > 1 || save; res.Resumed != stored {
			t.Fatalf("the second server resumed %v, want %v (a checkpoint stored before the crash)", res.Resumed, stored)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	for i, err := range wait() {
		if err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	return res, e
}

// checkEveryRoundFull checks that every round closed at quorum with every
// client in: no update lost (that round would wait for the deadline) and
// none counted twice (its weight would exceed the clients').
func checkEveryRoundFull(t *testing.T, res aggregator.Result) {
	t.Helper()
	if len(res.Closes) != recRounds {
		t.Fatalf("%d rounds closed, want %d", len(res.Closes), recRounds)
	}
	for i, rc := range res.Closes {
		if rc.Round != uint64(i+1) || rc.Reason != "quorum" || len(rc.In) != recClients || rc.Weight != 3*30 {
			t.Fatalf("round %d closed as %+v", i+1, rc)
		}
	}
}

// A server killed at any of its checkpoints, just before or just after
// storing it, resumes and produces the model of an uninterrupted run, bit
// for bit.
func TestDurableServerResumesAtEveryCheckpoint(t *testing.T) {
	ref, e := runDurable(t, 0, false)
	checkEveryRoundFull(t, ref)
	want := aggregator.ModelDigest(ref.Model)
	n := e.store.Saves()
	if n < recClients+recClients*recRounds {
		t.Fatalf("only %d checkpoints in a %d-round job of %d clients", n, recRounds, recClients)
	}
	for at := 1; at <= n; at++ {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("checkpoint-%d-saved-%v", at, save), func(t *testing.T) {
				res, _ := runDurable(t, at, save)
				checkEveryRoundFull(t, res)
				if got := aggregator.ModelDigest(res.Model); got != want {
					t.Fatalf("model %v (%s), want %v (%s)", res.Model, got[:12], ref.Model, want[:12])
				}
			})
		}
	}
}

// A resumed server refuses to continue a job under other round rules.
func TestDurableServerRefusesAnotherConfig(t *testing.T) {
	_, e := runDurable(t, 0, false)
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: recJob, Log: zerolog.Nop(), Store: e.store, Updates: e.log, Lease: e.lease(t, recJob),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: recRounds + 1, MinClients: recClients, RoundTimeout: time.Minute}},
		e.net.Transport())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Run(context.Background()); err == nil {
		t.Fatal("resumed a 3-round job as a 4-round one")
	}
}

// A durable server without the job's run lease is refused: a second one
// would announce itself to the first one's agents.
func TestDurableServerNeedsLease(t *testing.T) {
	e := newRecEnv(t)
	_, err := aggregator.NewServer(aggregator.ServerConfig{Job: recJob, Log: zerolog.Nop(), Store: e.store, Updates: e.log,
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: recRounds, MinClients: recClients, RoundTimeout: time.Minute}},
		e.net.Transport())
	if err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("a durable server without a lease: %v", err)
	}
}
