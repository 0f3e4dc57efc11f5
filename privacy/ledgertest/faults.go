package ledgertest

import (
	"context"
	"fmt"
	"sync"

	"graphfed/privacy"
)

// Faults injects failures into a real ledger's appends, as pebble's
// errorfs does into a file system: FaultLedger wraps the ledger, and
// Inject decides for each append (n counts them from 1, over the wrapper's
// life) whether it fails, and how.
type Faults struct {
	// Inject returns the failure of the n-th append of e, or nil for none.
	// After says the failure comes after the inner ledger stored the
	// entry (a lost acknowledgement) rather than before (nothing stored).
	Inject func(n int, e privacy.Entry) (after bool, err error)
	// Before, if set, runs before each append reaches the inner ledger
	// (a test stops a server there, say).
	Before func(n int, e privacy.Entry)
}

// FaultLedger is a privacy.Ledger that passes everything to the ledger it
// wraps, failing the appends Faults.Inject picks. Safe for concurrent use
// if the inner ledger is.
type FaultLedger struct {
	privacy.Ledger
	f Faults

	mu       sync.Mutex
	appends  int
	injected int
}

// NewFaultLedger wraps l.
func NewFaultLedger(l privacy.Ledger, f Faults) *FaultLedger {
	return &FaultLedger{Ledger: l, f: f}
}

// Append implements privacy.Ledger.
func (l *FaultLedger) Append(ctx context.Context, e privacy.Entry) error {
	l.mu.Lock()
	l.appends++
	n := l.appends
	l.mu.Unlock()
	if l.f.Before != nil {
		l.f.Before(n, e)
	}
	var fault error
	after := false
	if l.f.Inject != nil {
		after, fault = l.f.Inject(n, e)
	}
	if fault == nil {
		return l.Ledger.Append(ctx, e)
	}
	if after {
		// A repeat of a stored entry gets the ledger's own answer.
		if err := l.Ledger.Append(ctx, e); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.injected++
	l.mu.Unlock()
	return fault
}

// Appends is the number of appends the wrapper took, injected how many of
// them it failed with a fault of Inject's.
func (l *FaultLedger) Appends() (appends, injected int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appends, l.injected
}

// Timeout is the error a JetStream ledger returns when the server did not
// acknowledge an append in time: privacy.ErrLedger and
// context.DeadlineExceeded.
func Timeout(e privacy.Entry) error {
	return fmt.Errorf("ledgertest: injected: ledger append: %w: publish %s.%d: %w", privacy.ErrLedger, e.Client, e.Seq, context.DeadlineExceeded)
}

// TimeoutFirst fails the first k appends with Timeout, before the inner
// ledger sees them, or after it stored them (a lost acknowledgement).
func TimeoutFirst(k int, after bool) Faults {
	return Faults{Inject: func(n int, e privacy.Entry) (bool, error) {
		if n <= k {
			return after, Timeout(e)
		}
		return false, nil
	}}
}

// TimeoutEvery fails every append whose number is a multiple of m (m >= 1:
// m = 1 fails all of them), alternating before and after the inner append
// when alternate is set.
func TimeoutEvery(m int, alternate bool) Faults {
	return Faults{Inject: func(n int, e privacy.Entry) (bool, error) {
		if n%m == 0 {
			return alternate && (n/m)%2 == 0, Timeout(e)
		}
		return false, nil
	}}
}
