package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"graphfed/privacy"
)

// Retry before fail-stop (issue 29, item 6): a ledger append that fails
// for a transient reason (a timeout on a loaded server, no responders
// during a leader election, a connection being re-established) is
// repeated with backoff, within the round's deadline, before the agent
// gives the release up.
//
// Where the retry lives, and why: in the ledger, as a decorator beneath
// the gate (RetryLedger), not in the gate's caller and not in the gate.
//
//   - The caller (the agent's machine, or its driver) can only call
//     Gate.Release again, and a second Release is a second release: the
//     gate first repeats the failed entry (its pending one), then makes a
//     new entry at the next seq with the next noise stream. The result
//     would differ from a run whose first append succeeded, and the
//     machine, a pure state machine, would gain clocks and sleeps.
//   - The gate holds the privacy invariants (charged before appended,
//     durable before released, a failed entry repeated before anything
//     new) and knows nothing of which backend failures pass; keeping its
//     Append a single call keeps those invariants as they are: it sees one
//     append, acknowledged or failed.
//   - Beneath the gate, a repeat is the very entry the gate sealed, and
//     every ledger takes an exact repeat of its client's last stored entry
//     as success without a second copy (privacy.Ledger; JetStreamLedger
//     by message id and by the subject's last message): a retry after a
//     lost acknowledgement stores the entry once, and the ledger, the
//     gate's state and the noise are those of a first append that
//     succeeded. Append returns nil only once the inner ledger has
//     acknowledged the entry, so "durable before release" holds.
//
// The round's deadline reaches the ledger on the context
// (WithAppendDeadline, set by the agent's driver for the step that trains
// a round): it bounds the retries only, never the first attempt, so that
// a bank already late still makes its release as before.

// DefaultLedgerRetryWindow bounds the retries of an append whose context
// carries no round deadline (WithAppendDeadline).
const DefaultLedgerRetryWindow = 30 * time.Second

// appendDeadlineKey is the context key of WithAppendDeadline.
type appendDeadlineKey struct{}

// WithAppendDeadline returns ctx carrying the time by which a RetryLedger
// must have given up repeating a failed append: the round's deadline. It
// does not end ctx.
func WithAppendDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, appendDeadlineKey{}, t)
}

// AppendDeadline is the deadline WithAppendDeadline put on ctx.
func AppendDeadline(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(appendDeadlineKey{}).(time.Time)
	return t, ok
}

// LedgerRetry configures a RetryLedger. Zero values pick the defaults.
type LedgerRetry struct {
	// First is the pause after the first failure (default 100ms),
	// doubling up to Most (default 5s); each pause is jittered over its
	// upper half.
	First, Most time.Duration
	// Attempts bounds the appends of one entry, the first included
	// (default 16).
	Attempts int
	// Window bounds the retries when the context carries no round
	// deadline (default DefaultLedgerRetryWindow).
	Window time.Duration
	// Now and Sleep are the clock (default time.Now and a timer that ends
	// with ctx); Rand is the jitter's source (default a PCG seeded with
	// Seed). Tests inject all three.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  *rand.Rand
	Seed  uint64
	// Transient says whether a failed append may succeed if repeated
	// (default: the inner ledger's Transient method if it has one, else
	// TransientLedgerError).
	Transient func(error) bool
	// Log gets one warning per retry and an error when the retries give
	// up; OnRetry, if set, is called before each retry (metrics).
	Log     zerolog.Logger
	OnRetry func(e privacy.Entry, attempt int, err error)
}

// RetryLedger is a privacy.Ledger whose Append repeats a transient failure
// of the inner ledger's, with jittered exponential backoff, while the
// round's deadline (or Window) and Attempts allow. Reads pass through.
// Safe for concurrent use if the inner ledger is.
type RetryLedger struct {
	privacy.Ledger
	cfg LedgerRetry

	mu  sync.Mutex // guards rnd
	rnd *rand.Rand
}

// NewRetryLedger wraps l.
func NewRetryLedger(l privacy.Ledger, cfg LedgerRetry) (*RetryLedger, error) {
	switch {
	case l == nil:
		return nil, fmt.Errorf("bus: retry ledger: %w: nil ledger", privacy.ErrInvalid)
	case cfg.First < 0 || cfg.Most < 0 || cfg.Window < 0 || cfg.Attempts < 0:
		return nil, fmt.Errorf("bus: retry ledger: %w: negative pause, window or attempts", privacy.ErrInvalid)
	}
	if cfg.First == 0 {
		cfg.First = 100 * time.Millisecond
	}
	if cfg.Most == 0 {
		cfg.Most = 5 * time.Second
	}
	cfg.Most = max(cfg.Most, cfg.First)
	if cfg.Attempts == 0 {
		cfg.Attempts = 16
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultLedgerRetryWindow
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	if cfg.Transient == nil {
		cfg.Transient = TransientLedgerError
		if t, ok := l.(interface{ Transient(error) bool }); ok {
			cfg.Transient = t.Transient
		}
	}
	rnd := cfg.Rand
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	}
	return &RetryLedger{Ledger: l, cfg: cfg, rnd: rnd}, nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// jitter is a pause drawn from [d/2, d).
func (l *RetryLedger) jitter(d time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(l.rnd.Int64N(int64(half)))
}

// Append implements privacy.Ledger: the inner ledger's Append, repeated
// with the same entry while it fails transiently and a pause still ends
// before the round's deadline (AppendDeadline; else Window from the first
// failure) and within Attempts. The first attempt is the inner ledger's
// alone, as without the wrapper (a bank already late still releases);
// each repeat is cut at the deadline. It returns nil only once the inner
// ledger acknowledged the entry; giving up returns an error that names
// the entry, the attempts and the deadline, wrapping the last failure.
func (l *RetryLedger) Append(ctx context.Context, e privacy.Entry) error {
	err := l.Ledger.Append(ctx, e)
	if err == nil || !l.cfg.Transient(err) || ctx.Err() != nil {
		return err
	}
	until, ok := AppendDeadline(ctx)
	bound := "the round's deadline"
	if !ok {
		until, bound = l.cfg.Now().Add(l.cfg.Window), "the retry window"
	}
	what := fmt.Sprintf("append seq %d (%s, round %d) of client %s", e.Seq, e.Channel, e.Round, e.Client)
	pause := l.cfg.First
	attempts := 1
	for ; attempts < l.cfg.Attempts; attempts++ {
		wait := l.jitter(pause)
		now := l.cfg.Now()
		if !now.Add(wait).Before(until) {
			break
		}
		l.cfg.Log.Warn().Str("client", e.Client).Uint64("seq", e.Seq).Str("channel", string(e.Channel)).
			Uint64("round", e.Round).Int("attempt", attempts+1).Dur("pause", wait).Time("until", until).Err(err).
			Msg("ledger append failed transiently: retrying the same entry")
		if l.cfg.OnRetry != nil {
			l.cfg.OnRetry(e, attempts+1, err)
		}
		if serr := l.cfg.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("bus: ledger retry: %s: %w while waiting to retry after: %w", what, serr, err)
		}
		// A retry ends with the round: bounded by what is left of it on
		// the injected clock (without a deadline on ctx the inner ledger
		// would bound it by its own timeout, possibly past the round).
		actx, cancel := context.WithTimeout(ctx, until.Sub(l.cfg.Now()))
		err = l.Ledger.Append(actx, e)
		if err != nil && errors.Is(err, privacy.ErrChainMoved) && l.storedLast(actx, e) {
			err = nil
		}
		cancel()
		if err == nil {
			l.cfg.Log.Info().Str("client", e.Client).Uint64("seq", e.Seq).Int("attempts", attempts+1).
				Msg("ledger append acknowledged after retries")
			return nil
		}
		if !l.cfg.Transient(err) || ctx.Err() != nil {
			return fmt.Errorf("bus: ledger retry: %s: attempt %d failed for good: %w", what, attempts+1, err)
		}
		pause = min(2*pause, l.cfg.Most)
	}
	l.cfg.Log.Error().Str("client", e.Client).Uint64("seq", e.Seq).Str("channel", string(e.Channel)).
		Uint64("round", e.Round).Int("attempts", attempts).Time("until", until).Err(err).
		Msg("ledger append still failing: giving the release up")
	return fmt.Errorf("bus: ledger retry: %s: gave up after %d attempts, the retries bounded by %s (%s): nothing released: %w",
		what, attempts, bound, until.UTC().Format(time.RFC3339Nano), err)
}

// storedLast reports whether the inner ledger holds e, exactly, as its
// client's last entry: a repeat refused because the chain moved on, by a
// ledger that does not take exact repeats as success (MemLedger,
// FileLedger), is then the earlier attempt stored with its
// acknowledgement lost. The JetStream ledger settles that itself and never
// gets here. A failed read is a no.
func (l *RetryLedger) storedLast(ctx context.Context, e privacy.Entry) bool {
	want, err := privacy.EncodeEntry(e)
	if err != nil {
		return false
	}
	recs, err := l.Ledger.Records(ctx)
	if err != nil {
		return false
	}
	var last []byte
	for _, r := range recs {
		d, err := privacy.DecodeEntry(r.Data)
		if err != nil || d.Job != e.Job || d.Client != e.Client || r.Client != "" && r.Client != e.Client {
			continue
		}
		if b, err := privacy.EncodeEntry(d); err == nil {
			last = b
		}
	}
	return last != nil && bytes.Equal(last, want)
}

// TransientLedgerError reports whether a failed ledger append may succeed
// if repeated: the server did not answer in time, had no responder (a
// restart, a stream leader election), answered 503 or 408, or the
// connection is being re-established. A refusal of the entry
// (privacy.ErrInvalid, ErrChainMoved), a corrupt ledger, a cancelled
// context and any other failure are final.
func TransientLedgerError(err error) bool {
	if err == nil || errors.Is(err, privacy.ErrInvalid) || errors.Is(err, privacy.ErrCorrupt) ||
		errors.Is(err, privacy.ErrChainMoved) || errors.Is(err, context.Canceled) {
		return false
	}
	for _, t := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders, jetstream.ErrNoStreamResponse,
		nats.ErrConnectionReconnecting, nats.ErrDisconnected, nats.ErrReconnectBufExceeded, nats.ErrConnectionClosed} {
		if errors.Is(err, t) {
			return true
		}
	}
	var jsErr jetstream.JetStreamError
	if errors.As(err, &jsErr) && jsErr.APIError() != nil {
		code := jsErr.APIError().Code
		return code == 503 || code == 408
	}
	return false
}

// Transient is TransientLedgerError for this ledger's appends, except
// that nothing is transient once the ledger's connection is closed for
// good (a closed nats.Conn never reconnects).
func (l *JetStreamLedger) Transient(err error) bool {
	if l.js != nil && l.js.Conn() != nil && l.js.Conn().IsClosed() {
		return false
	}
	return TransientLedgerError(err)
}
