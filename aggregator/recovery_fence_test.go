package aggregator_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
)

// fakeClock is a clock whose Sleep advances it at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// A durable server whose lease another aggregator took over stops at
// once with the reason, and sends nothing more: not even the stop notice,
// which agents that have not heard of the new run would take for theirs.
func TestDurableServerStopsWhenLeaseLost(t *testing.T) {
	e := newRecEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := make(chan struct{})
	sleep := func(ctx context.Context, d time.Duration) error { // renewals on the test's word
		if d <= 0 {
			return ctx.Err()
		}
		select {
		case <-tick:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	run, err := bus.NewRunID(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := aggregator.AcquireLease(ctx, &e.leases, aggregator.LeaseConfig{Job: recJob, Run: run, TTL: time.Hour, Sleep: sleep, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	var dones atomic.Int64
	watch, err := e.net.Transport().Subscribe(func(bus.Msg) { dones.Add(1) }, bus.Subject(recJob, bus.KindDone))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Unsubscribe()
	srv, err := aggregator.NewServer(aggregator.ServerConfig{Job: recJob, Log: zerolog.Nop(), Store: e.store, Updates: e.log, Lease: lease,
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: recRounds, MinClients: recClients, RoundTimeout: time.Minute}},
		e.net.Transport())
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := srv.Run(ctx)
		ended <- err
	}()

	// A second aggregator finds the lease unrenewed for its TTL (on its
	// clock) and takes the job over; the first's next renewal conflicts.
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	next, err := bus.NewRunID(clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := aggregator.AcquireLease(ctx, &e.leases, aggregator.LeaseConfig{Job: recJob, Run: next, TTL: time.Hour,
		Now: clock.Now, Sleep: clock.Sleep, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release(context.Background())
	tick <- struct{}{}
	select {
	case err = <-ended:
	case <-ctx.Done():
		t.Fatal("the server went on after its lease was taken over")
	}
	if err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("the server stopped with %v, want the lease taken over", err)
	}
	if n := dones.Load(); n != 0 {
		t.Fatalf("the server sent %d dones after its lease was taken over", n)
	}
}
