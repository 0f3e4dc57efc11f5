package aggregator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
)

const leaseJob = "lease"

// stepClock is one machine's clock: Sleep advances it at once, so that a
// newcomer's watch of a TTL takes no wall time.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func newStepClock() *stepClock { return &stepClock{now: time.Unix(1_700_000_000, 0)} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.advance(d)
	return ctx.Err()
}

// holder is a live lease whose renewals the test drives one at a time.
type holder struct {
	*Lease
	clock *stepClock
	tick  chan struct{}
}

func runID(t *testing.T, at time.Time) string {
	t.Helper()
	id, err := bus.NewRunID(at)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func takeHolder(t *testing.T, store LeaseStore, ttl time.Duration) *holder {
	t.Helper()
	h := &holder{clock: newStepClock(), tick: make(chan struct{})}
	sleep := func(ctx context.Context, d time.Duration) error {
		if d <= 0 { // a retry at once
			return ctx.Err()
		}
		select {
		case <-h.tick:
			h.clock.advance(d)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l, err := AcquireLease(context.Background(), store, LeaseConfig{Job: leaseJob, Run: runID(t, h.clock.Now()), TTL: ttl,
		Host: "host-a", PID: 7, Now: h.clock.Now, Sleep: sleep, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	h.Lease = l
	t.Cleanup(func() { l.Release(context.Background()) })
	return h
}

// renewOnce lets the holder renew once and waits until the record moved.
func (h *holder) renewOnce(t *testing.T, store LeaseStore) {
	t.Helper()
	_, before, _ := store.Get(context.Background())
	h.tick <- struct{}{}
	waitFor(t, "the renewal", func() bool {
		_, rev, _ := store.Get(context.Background())
		return rev != before
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func record(t *testing.T, store LeaseStore) leaseRecord {
	t.Helper()
	data, _, err := store.Get(context.Background())
	if err != nil || data == nil {
		t.Fatalf("lease record: %v (%d bytes)", err, len(data))
	}
	r, err := decodeLease(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newcomer's config: its own clock, sleep hook and the job's TTL.
func newcomer(t *testing.T, clock *stepClock, sleep func(context.Context, time.Duration) error) LeaseConfig {
	if sleep == nil {
		sleep = clock.Sleep
	}
	return LeaseConfig{Job: leaseJob, Run: runID(t, clock.Now().Add(time.Hour)), TTL: time.Minute, Now: clock.Now, Sleep: sleep, Log: zerolog.Nop()}
}

func TestLeaseOfAFreshJob(t *testing.T) {
	var store MemLeaseStore
	h := takeHolder(t, &store, time.Minute)
	r := record(t, &store)
	if r.Run != h.Run() || len(r.Ended) != 0 || r.Released || r.Host != "host-a" || r.PID != 7 || len(h.Ended()) != 0 {
		t.Fatalf("record %+v, ended %v", r, h.Ended())
	}
	if err := h.Held(); err != nil {
		t.Fatal(err)
	}
}

// The fix for issue 28's hang: a second aggregator finds the lease
// renewed while it watches and refuses, having written nothing.
func TestLeaseRefusesWhileHolderRenews(t *testing.T) {
	var store MemLeaseStore
	h := takeHolder(t, &store, time.Minute)
	clock := newStepClock()
	renewed := false
	sleep := func(ctx context.Context, d time.Duration) error {
		if !renewed { // the holder renews during the watch
			renewed = true
			h.renewOnce(t, &store)
		}
		return clock.Sleep(ctx, d)
	}
	cfg := newcomer(t, clock, sleep)
	_, err := AcquireLease(context.Background(), &store, cfg)
	var running *JobRunningError
	if !errors.Is(err, ErrJobRunning) || !errors.As(err, &running) || running.Run != h.Run() {
		t.Fatalf("second aggregator: %v, want a refusal naming run %s", err, h.Run())
	}
	want := "job " + leaseJob + " is being run by run " + h.Run() + " since "
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "refusing to start a second aggregator") {
		t.Fatalf("refusal %q does not say %q", err, want)
	}
	if r := record(t, &store); r.Run != h.Run() {
		t.Fatalf("the refused aggregator wrote the lease: %+v", r)
	}
	if err := h.Held(); err != nil {
		t.Fatalf("the holder lost its lease to a refused aggregator: %v", err)
	}
}

// A holder that stopped renewing (killed) is taken over after a TTL of
// the newcomer's clock, and the dead run is named among the ended.
func TestLeaseLapsedIsTakenOver(t *testing.T) {
	var store MemLeaseStore
	h := takeHolder(t, &store, time.Minute) // never ticked: dead
	clock := newStepClock()
	start := clock.Now()
	l, err := AcquireLease(context.Background(), &store, newcomer(t, clock, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	// The record's Since, not the clock: the new holder's renewals advance
	// the step clock as soon as it holds the lease.
	if waited := record(t, &store).Since.Sub(start); waited < time.Minute {
		t.Fatalf("took a live-looking lease over after %v, before its TTL", waited)
	}
	if got := l.Ended(); len(got) != 1 || got[0] != h.Run() {
		t.Fatalf("ended %v, want [%s]", got, h.Run())
	}
	if r := record(t, &store); r.Run != l.Run() {
		t.Fatalf("record %+v", r)
	}
	// The old holder's next renewal finds the record moved on: lost.
	h.tick <- struct{}{}
	<-h.Lost()
	if err := h.Held(); err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("old holder after the takeover: %v", err)
	}
}

// A released lease is taken over at once, and the chain of ended runs
// grows run by run.
func TestLeaseReleasedIsTakenOverAtOnce(t *testing.T) {
	var store MemLeaseStore
	h := takeHolder(t, &store, time.Minute)
	if err := h.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Held(); err == nil {
		t.Fatal("a released lease is still held")
	}
	clock := newStepClock()
	start := clock.Now()
	second, err := AcquireLease(context.Background(), &store, newcomer(t, clock, nil))
	if err != nil {
		t.Fatal(err)
	}
	// The record's Since, not the clock, which the new holder's renewals
	// advance (without a pause) from the moment it holds the lease.
	if took := record(t, &store).Since; !took.Equal(start) {
		t.Fatalf("waited %v for a released lease", took.Sub(start))
	}
	if err := second.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	third, err := AcquireLease(context.Background(), &store, newcomer(t, newStepClock(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release(context.Background())
	if got := third.Ended(); len(got) != 2 || got[0] != h.Run() || got[1] != second.Run() {
		t.Fatalf("ended %v, want [%s %s]", got, h.Run(), second.Run())
	}
}

// failingStore fails every write while failing is set.
type failingStore struct {
	LeaseStore
	mu      sync.Mutex
	failing bool
}

func (s *failingStore) fail(on bool) {
	s.mu.Lock()
	s.failing = on
	s.mu.Unlock()
}

func (s *failingStore) Update(ctx context.Context, data []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	f := s.failing
	s.mu.Unlock()
	if f {
		return 0, errors.New("no stream leader")
	}
	return s.LeaseStore.Update(ctx, data, rev)
}

// A holder that cannot renew holds nothing once a TTL has passed since its
// last renewal began, and says so.
func TestLeaseUnrenewedForATTLIsLost(t *testing.T) {
	store := &failingStore{LeaseStore: &MemLeaseStore{}}
	h := takeHolder(t, store, time.Minute)
	h.clock.advance(time.Minute)
	if err := h.Held(); err == nil {
		t.Fatal("held a TTL after its last renewal")
	}
	store.fail(true)
	for ticks := 0; ; ticks++ { // a TTL's worth of the holder's retries
		if ticks > 1000 {
			t.Fatal("a holder failing to renew never lost its lease")
		}
		select {
		case h.tick <- struct{}{}:
			continue
		case <-h.Lost():
		}
		break
	}
	if err := h.Held(); err == nil || !strings.Contains(err.Error(), "not renewed") {
		t.Fatalf("after a TTL of failed renewals: %v", err)
	}
}

// lostAckStore stores the first update it is armed for, then reports it
// failed: a renewal whose acknowledgement was lost.
type lostAckStore struct {
	LeaseStore
	mu    sync.Mutex
	armed bool
}

func (s *lostAckStore) Update(ctx context.Context, data []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	armed := s.armed
	s.armed = false
	s.mu.Unlock()
	r, err := s.LeaseStore.Update(ctx, data, rev)
	if armed && err == nil {
		return 0, context.DeadlineExceeded
	}
	return r, err
}

// A renewal stored though reported failed moves the revision on; the next
// one conflicts with the holder's own record, which is not a takeover.
func TestLeaseOwnLostRenewalIsNoTakeover(t *testing.T) {
	store := &lostAckStore{LeaseStore: &MemLeaseStore{}}
	h := takeHolder(t, store, time.Minute)
	store.mu.Lock()
	store.armed = true
	store.mu.Unlock()
	h.renewOnce(t, store) // stored, reported failed
	h.renewOnce(t, store) // conflicts with its own record, adopts it, renews on top
	select {
	case <-h.Lost():
		t.Fatalf("lost to its own renewal: %v", h.Held())
	default:
	}
	if r := record(t, store); r.Run != h.Run() || r.Released {
		t.Fatalf("record %+v", r)
	}
}

// An unreadable record is nobody's to overwrite: the newcomer stops.
func TestLeaseUnreadableRecordIsRefused(t *testing.T) {
	var store MemLeaseStore
	if _, err := store.Create(context.Background(), []byte(`{"version":99}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLease(context.Background(), &store, newcomer(t, newStepClock(), nil)); err == nil {
		t.Fatal("took over a lease record it could not read")
	}
}
