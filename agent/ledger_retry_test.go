package agent_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
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

// deadlineSpy is a ledger wrapper that notes whether each append's
// context carried the round's deadline (bus.WithAppendDeadline).
type deadlineSpy struct {
	privacy.Ledger
	mu             sync.Mutex
	with, without  int
	deadlineRounds map[uint64]time.Time
}

func (s *deadlineSpy) Append(ctx context.Context, e privacy.Entry) error {
	s.mu.Lock()
	if t, ok := bus.AppendDeadline(ctx); ok {
		s.with++
		if s.deadlineRounds == nil {
			s.deadlineRounds = map[uint64]time.Time{}
		}
		s.deadlineRounds[e.Round] = t
	} else {
		s.without++
	}
	s.mu.Unlock()
	return s.Ledger.Append(ctx, e)
}

// retryRun is one job's outcome, with each bank's ledger entries and the
// retries its RetryLedger made.
type retryRun struct {
	run
	entries [][]privacy.Entry
	retries []int
	spies   []*deadlineSpy
}

// runWithFaults runs a FedAvg job of three banks over the in-memory bus,
// each bank's ledger a MemLedger behind faults[i] (a FaultLedger) and a
// RetryLedger whose pauses return at once; now[i], if set, is bank i's
// retry clock. The gates' clocks are fixed, so that entries compare
// exactly across runs.
func runWithFaults(t *testing.T, faults []ledgertest.Faults, now []func() time.Time, timeout time.Duration, rounds int) retryRun {
	t.Helper()
	net := bus.NewInmemNetwork()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := len(faults)
	srv, err := aggregator.NewServer(aggregator.ServerConfig{
		Job: "job", InitSeed: 3, FinalWait: 2 * time.Second, Log: zerolog.Nop(),
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: rounds, MinClients: n, RoundTimeout: timeout},
	}, net.Transport())
	if err != nil {
		t.Fatal(err)
	}
	out := retryRun{run: run{agents: make([]agent.Result, n), errs: make([]error, n)},
		entries: make([][]privacy.Entry, n), retries: make([]int, n), spies: make([]*deadlineSpy, n)}
	mems := make([]*privacy.MemLedger, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range faults {
		mems[i] = privacy.NewMemLedger()
		out.spies[i] = &deadlineSpy{Ledger: ledgertest.NewFaultLedger(mems[i], faults[i])}
		cfg := bus.LedgerRetry{Seed: uint64(i), Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Log: zerolog.Nop(), OnRetry: func(privacy.Entry, int, error) { mu.Lock(); out.retries[i]++; mu.Unlock() }}
		if now != nil {
			cfg.Now = now[i]
		}
		rl, err := bus.NewRetryLedger(out.spies[i], cfg)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("c%d", i)
		seed := uint64(i)
		at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		gate, err := privacy.NewGate(ctx, privacy.Config{Job: "job", Client: id, Delta: 1e-4, Seed: &seed}, rl, func() time.Time { return at })
		if err != nil {
			t.Fatal(err)
		}
		l := &meanLearner{target: []float32{float32(i), 1, -float32(i)}, n: 10 * (i + 1)}
		a, err := agent.New(agent.Config{Job: "job", Client: id, LocalEpochs: 1, HelloRetry: 200 * time.Millisecond,
			ModelSigma: 0.01, ModelClip: 15, Log: zerolog.Nop()}, net.Transport(), l, gate)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out.agents[i], out.errs[i] = a.Run(ctx)
		}(i)
	}
	out.agg, err = srv.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, m := range mems {
		if out.entries[i], err = m.Entries(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A bank whose first ledger appends time out (before the ledger stored
// them, or after: a lost acknowledgement) retries them within the round
// and ends the job exactly as a bank whose ledger never failed: the same
// entries, the same model, the same scores.
func TestAgentRetriedAppendsLeaveTheRunUnchanged(t *testing.T) {
	clean := []ledgertest.Faults{{}, {}, {}}
	ref := runWithFaults(t, clean, nil, 10*time.Second, 3)
	for i, err := range ref.errs {
		if err != nil {
			t.Fatalf("clean run: agent %d: %v", i, err)
		}
		if len(ref.entries[i]) != 3 || ref.agents[i].Rounds != 3 || ref.agents[i].Final == nil {
			t.Fatalf("clean run: bank %d: %d entries, %d rounds, final %v", i, len(ref.entries[i]), ref.agents[i].Rounds, ref.agents[i].Final)
		}
	}
	if len(ref.agg.Model) == 0 || ref.agg.Rounds != 3 {
		t.Fatalf("clean run: %d rounds, model %v", ref.agg.Rounds, ref.agg.Model)
	}
	tests := []struct {
		name   string
		faults []ledgertest.Faults
	}{
		{"first append of one bank times out", []ledgertest.Faults{ledgertest.TimeoutFirst(1, false), {}, {}}},
		{"first 3 appends of every bank time out", []ledgertest.Faults{ledgertest.TimeoutFirst(3, false), ledgertest.TimeoutFirst(3, false), ledgertest.TimeoutFirst(3, false)}},
		{"first 2 acks lost after storing", []ledgertest.Faults{ledgertest.TimeoutFirst(2, true), {}, ledgertest.TimeoutFirst(2, true)}},
		{"every other append fails, half after storing", []ledgertest.Faults{ledgertest.TimeoutEvery(2, true), ledgertest.TimeoutEvery(2, false), {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runWithFaults(t, tc.faults, nil, 10*time.Second, 3)
			for i, err := range got.errs {
				if err != nil {
					t.Fatalf("agent %d: %v", i, err)
				}
			}
			total := 0
			for i := range tc.faults {
				total += got.retries[i]
				if !reflect.DeepEqual(got.entries[i], ref.entries[i]) {
					t.Errorf("bank %d: ledger entries\n%+v\nwant\n%+v", i, got.entries[i], ref.entries[i])
				}
				if !reflect.DeepEqual(got.agents[i].Final, ref.agents[i].Final) || got.agents[i].Rounds != ref.agents[i].Rounds {
					t.Errorf("bank %d: %d rounds, final %v; want %d, %v", i, got.agents[i].Rounds, got.agents[i].Final, ref.agents[i].Rounds, ref.agents[i].Final)
				}
				// Every release of a round carried that round's deadline to
				// the ledger.
				if s := got.spies[i]; s.without != 0 || s.with == 0 {
					t.Errorf("bank %d: %d appends with the round's deadline, %d without", i, s.with, s.without)
				}
			}
			if total == 0 {
				t.Fatal("no append was retried")
			}
			if !reflect.DeepEqual(got.agg.Model, ref.agg.Model) {
				t.Fatalf("model %v, want %v", got.agg.Model, ref.agg.Model)
			}
			if !reflect.DeepEqual(got.agg.Final, ref.agg.Final) {
				t.Fatalf("final scores %v, want %v", got.agg.Final, ref.agg.Final)
			}
		})
	}
}

// A bank whose ledger still fails when the round's deadline comes gives
// the release up and stops, as before the retries: nothing released,
// nothing in its ledger, an error that names the append, the attempts and
// the deadline. The others finish the job.
func TestAgentAppendFailingPastTheDeadlineStops(t *testing.T) {
	// Bank 0's retry clock is an hour ahead after its first look: its
	// first retry would end past any round's deadline.
	var mu sync.Mutex
	looks := 0
	late := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		looks++
		if looks > 1 {
			return time.Now().Add(time.Hour)
		}
		return time.Now()
	}
	faults := []ledgertest.Faults{ledgertest.TimeoutEvery(1, false), {}, {}}
	got := runWithFaults(t, faults, []func() time.Time{late, time.Now, time.Now}, 2*time.Second, 2)
	err := got.errs[0]
	if err == nil {
		t.Fatal("bank 0 ran on without its ledger")
	}
	for _, s := range []string{"release model of round 1", "append seq 1", "gave up after", "round's deadline", "nothing released"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if !errors.Is(err, privacy.ErrLedger) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q does not wrap the ledger failure and its timeout", err)
	}
	if len(got.entries[0]) != 0 || got.agents[0].Rounds != 1 {
		t.Errorf("bank 0: %d entries stored, %d rounds trained; want none stored, the one round it trained", len(got.entries[0]), got.agents[0].Rounds)
	}
	for i := 1; i < len(faults); i++ {
		if got.errs[i] != nil {
			t.Errorf("bank %d: %v", i, got.errs[i])
		}
	}
	for _, c := range got.agg.Closes {
		for _, in := range c.In {
			if in == "c0" {
				t.Fatalf("round %d counted an update of bank 0, whose release was given up", c.Round)
			}
		}
	}
}
