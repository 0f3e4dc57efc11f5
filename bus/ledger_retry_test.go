package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

var retryT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a RetryLedger's clock whose sleeps return at once and
// move it on by the pause, recorded: no test waits for real time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	pauses []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.pauses = append(c.pauses, d)
	return ctx.Err()
}

func (c *fakeClock) Pauses() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.pauses...)
}

// retryRig is a RetryLedger over a fault-injecting wrapper of a MemLedger,
// on a fake clock, logging to a buffer and counting its retries.
type retryRig struct {
	mem     *privacy.MemLedger
	faults  *ledgertest.FaultLedger
	l       *RetryLedger
	clock   *fakeClock
	log     *bytes.Buffer
	retries int
}

func newRetryRig(t *testing.T, f ledgertest.Faults, cfg LedgerRetry) *retryRig {
	t.Helper()
	r := &retryRig{mem: privacy.NewMemLedger(), clock: &fakeClock{now: retryT0}, log: &bytes.Buffer{}}
	r.faults = ledgertest.NewFaultLedger(r.mem, f)
	cfg.Now, cfg.Sleep, cfg.Log = r.clock.Now, r.clock.Sleep, zerolog.New(r.log)
	cfg.OnRetry = func(privacy.Entry, int, error) { r.retries++ }
	l, err := NewRetryLedger(r.faults, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.l = l
	return r
}

func TestRetryLedgerAppend(t *testing.T) {
	refused := ledgertest.Faults{Inject: func(n int, e privacy.Entry) (bool, error) {
		if n == 1 {
			return false, fmt.Errorf("injected: %w: %w", privacy.ErrInvalid, privacy.ErrChainMoved)
		}
		return false, nil
	}}
	want := ledgertest.Entries()
	tests := []struct {
		name     string
		faults   ledgertest.Faults
		cfg      LedgerRetry
		deadline time.Duration // from retryT0; 0: none on the context
		// want: every entry stored, each injected fault retried once;
		// or an error containing every one of errHas.
		faulty bool
		errHas []string
		errIs  []error
	}{
		{name: "no faults", faults: ledgertest.TimeoutFirst(0, false), deadline: time.Minute},
		{name: "first 3 time out before the ledger", faults: ledgertest.TimeoutFirst(3, false), deadline: time.Minute, faulty: true},
		{name: "first 3 acks lost after storing", faults: ledgertest.TimeoutFirst(3, true), deadline: time.Minute, faulty: true},
		{name: "every other append times out or loses its ack", faults: ledgertest.TimeoutEvery(2, true), deadline: time.Minute,
			faulty: true},
		{name: "no round deadline: the window bounds", faults: ledgertest.TimeoutFirst(2, true), faulty: true},
		{name: "a refusal is final", faults: refused, deadline: time.Minute,
			errHas: []string{"injected"}, errIs: []error{privacy.ErrInvalid, privacy.ErrChainMoved}},
		{name: "still failing at the round's deadline", faults: ledgertest.TimeoutEvery(1, false), deadline: 3 * time.Second,
			errHas: []string{"gave up after", "round's deadline", "append seq 1", "nothing released"},
			errIs:  []error{privacy.ErrLedger, context.DeadlineExceeded}},
		{name: "still failing after the attempts", faults: ledgertest.TimeoutEvery(1, false), cfg: LedgerRetry{Attempts: 4}, deadline: time.Hour,
			errHas: []string{"gave up after 4 attempts"}, errIs: []error{privacy.ErrLedger, context.DeadlineExceeded}},
		{name: "still failing at the end of the window", faults: ledgertest.TimeoutEvery(1, false), cfg: LedgerRetry{Window: 2 * time.Second},
			errHas: []string{"gave up after", "retry window"}, errIs: []error{privacy.ErrLedger}},
		{name: "the round's deadline passed already", faults: ledgertest.TimeoutFirst(1, false), deadline: -time.Second,
			errHas: []string{"gave up after 1 attempts"}, errIs: []error{privacy.ErrLedger}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetryRig(t, tc.faults, tc.cfg)
			ctx := context.Background()
			if tc.deadline != 0 {
				ctx = WithAppendDeadline(ctx, retryT0.Add(tc.deadline))
			}
			var err error
			for _, e := range want {
				if err = r.l.Append(ctx, e); err != nil {
					break
				}
			}
			switch {
			case tc.errHas == nil && err != nil:
				t.Fatalf("append: %v", err)
			case tc.errHas != nil && err == nil:
				t.Fatal("append succeeded")
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			for _, k := range tc.errIs {
				if !errors.Is(err, k) {
					t.Errorf("error %q does not wrap %v", err, k)
				}
			}
			got, err := r.mem.Entries(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tc.errHas == nil {
				// What the faults did is invisible: the ledger holds every
				// entry once, as a ledger without faults would.
				checkEntries(t, got, want)
				_, injected := r.faults.Appends()
				if r.retries != injected || tc.faulty != (injected > 0) {
					t.Errorf("%d retries counted for %d injected faults", r.retries, injected)
				}
			} else if len(got) != 0 && !errors.Is(err, privacy.ErrInvalid) {
				t.Errorf("%d entries stored by appends that failed before the ledger", len(got))
			}
			if n := strings.Count(r.log.String(), "retrying the same entry"); n != r.retries {
				t.Errorf("%d retries logged, %d counted:\n%s", n, r.retries, r.log)
			}
			for _, p := range r.clock.Pauses() {
				if p < 50*time.Millisecond || p >= 5*time.Second {
					t.Errorf("pause %v outside [First/2, Most)", p)
				}
			}
			if tc.deadline > 0 && r.clock.Now().After(retryT0.Add(tc.deadline)) {
				t.Errorf("retried until %v, past the round's deadline %v", r.clock.Now(), retryT0.Add(tc.deadline))
			}
		})
	}
}

// The jitter comes from the seeded source: the same seed, the same pauses;
// another seed, others.
func TestRetryLedgerJitterIsSeeded(t *testing.T) {
	pauses := func(seed uint64) []time.Duration {
		r := newRetryRig(t, ledgertest.TimeoutEvery(1, false), LedgerRetry{Seed: seed, Attempts: 8})
		if err := r.l.Append(context.Background(), ledgertest.Entries()[0]); err == nil {
			t.Fatal("append succeeded")
		}
		return r.clock.Pauses()
	}
	a, b, c := pauses(1), pauses(1), pauses(2)
	if len(a) != 7 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("pauses %v and %v under one seed", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatalf("pauses %v under two seeds", a)
	}
}

// A cancelled context ends the retries: the caller is going away.
func TestRetryLedgerStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := newRetryRig(t, ledgertest.Faults{Inject: func(n int, e privacy.Entry) (bool, error) {
		if n == 2 {
			cancel()
		}
		return false, ledgertest.Timeout(e)
	}}, LedgerRetry{})
	err := r.l.Append(WithAppendDeadline(ctx, retryT0.Add(time.Hour)), ledgertest.Entries()[0])
	if !errors.Is(err, context.Canceled) && !errors.Is(err, privacy.ErrLedger) {
		t.Fatalf("append: %v", err)
	}
	if n, _ := r.faults.Appends(); n != 2 {
		t.Fatalf("%d appends, want 2 (none after the cancel)", n)
	}
}

// The conformance suite holds through the retry wrapper over a ledger that
// times out every other append, half of them after storing the entry.
func TestRetryLedgerConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) privacy.Ledger {
		return newRetryRig(t, ledgertest.TimeoutEvery(2, true), LedgerRetry{}).l
	})
}

func TestTransientLedgerError(t *testing.T) {
	jsErr := func(code int) error {
		return &jetstream.APIError{Code: code, Description: "test"}
	}
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("publish: %w: %w", privacy.ErrLedger, context.DeadlineExceeded), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, errors.Join(nats.ErrTimeout, context.DeadlineExceeded)), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, nats.ErrNoResponders), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, jetstream.ErrNoStreamResponse), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, nats.ErrConnectionReconnecting), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, nats.ErrConnectionClosed), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, jsErr(503)), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, jsErr(408)), true},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, jsErr(400)), false},
		{fmt.Errorf("%w: %w", privacy.ErrLedger, context.Canceled), false},
		{fmt.Errorf("%w: seq 3: %w", privacy.ErrInvalid, privacy.ErrChainMoved), false},
		{fmt.Errorf("%w: %w", privacy.ErrCorrupt, context.DeadlineExceeded), false},
		{fmt.Errorf("%w: fsync: disk full", privacy.ErrLedger), false},
	}
	for _, tc := range tests {
		if got := TransientLedgerError(tc.err); got != tc.want {
			t.Errorf("TransientLedgerError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A JetStream ledger's append during which the server stops, and starts
// again on its store, is retried until the server is back: the gate's
// release goes out after the acknowledged append, the ledger holds every
// entry once, and the gate goes on with its next releases. No assertion
// on time: the retries are bounded by a deadline far away, and the
// restart happens at the first retry's pause.
func TestRetryLedgerAcrossServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := StartServer(ServerOptions{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		restarted bool
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		srv.Shutdown()
	})
	port := urlPort(t, srv.ClientURL())
	nc, err := Connect(srv.ClientURL(), ConnectOptions{Name: t.Name(), ReconnectWait: 50 * time.Millisecond, MaxReconnects: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	jsl := openJSTestLedger(t, nc, jsTestJob, JSLedgerOptions{Timeout: 500 * time.Millisecond})
	stopAt := 2 // the round-2 release's append
	faults := ledgertest.NewFaultLedger(jsl, ledgertest.Faults{Before: func(n int, e privacy.Entry) {
		if n == stopAt {
			mu.Lock()
			srv.Shutdown()
			mu.Unlock()
		}
	}})
	var log bytes.Buffer
	retries := 0
	rl, err := NewRetryLedger(faults, LedgerRetry{Seed: 7, Log: zerolog.New(&log), Transient: jsl.Transient,
		OnRetry: func(privacy.Entry, int, error) { retries++ },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			if !restarted {
				restarted = true
				s, err := StartServer(ServerOptions{StoreDir: dir, Port: port})
				if err != nil {
					mu.Unlock()
					return err
				}
				srv = s
			}
			mu.Unlock()
			return sleepCtx(ctx, d)
		}})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(5)
	clock := func() time.Time { return retryT0 }
	ctx := context.Background()
	gate, err := privacy.NewGate(ctx, privacy.Config{Job: jsTestJob, Client: "bank-3", Delta: 1e-5, Seed: &seed}, rl, clock)
	if err != nil {
		t.Fatal(err)
	}
	var released [][]float32
	for round := uint64(1); round <= 3; round++ {
		rctx := WithAppendDeadline(ctx, time.Now().Add(2*time.Minute))
		rel, err := gate.Release(rctx, privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: []float32{1, 2, 3}, Dim: 3, Sigma: 0.1, Clip: 10})
		if err != nil {
			t.Fatalf("release of round %d: %v\n%s", round, err, log.String())
		}
		released = append(released, rel.Data())
	}
	if !restarted || retries == 0 {
		t.Fatalf("the server was not restarted during an append (restarted %v, %d retries)", restarted, retries)
	}
	// The same releases, entries and noise as a gate whose ledger never
	// failed.
	mem := privacy.NewMemLedger()
	ref, err := privacy.NewGate(ctx, privacy.Config{Job: jsTestJob, Client: "bank-3", Delta: 1e-5, Seed: &seed}, mem, clock)
	if err != nil {
		t.Fatal(err)
	}
	for round := uint64(1); round <= 3; round++ {
		rel, err := ref.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: []float32{1, 2, 3}, Dim: 3, Sigma: 0.1, Clip: 10})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rel.Data()) != fmt.Sprint(released[round-1]) {
			t.Fatalf("round %d released %v, want %v", round, released[round-1], rel.Data())
		}
	}
	nc2 := jsConn(t, currentURL(&mu, &srv))
	got := mustEntries(t, openJSTestLedger(t, nc2, jsTestJob, JSLedgerOptions{ReadOnly: true}))
	checkEntries(t, got, mustEntries(t, mem))
}

func currentURL(mu *sync.Mutex, srv **Server) string {
	mu.Lock()
	defer mu.Unlock()
	return (*srv).ClientURL()
}
