package privacy

import (
	"context"
	"fmt"
	"sync"
)

// MemLedger is the in-memory Ledger double: the same validation and
// ordering rules as FileLedger, no durability. For tests and simulations;
// its appends can be made to fail to exercise the gate's error paths.
type MemLedger struct {
	mu        sync.Mutex
	entries   []Entry
	seqs      seqTracker
	appendErr error
}

// NewMemLedger returns an empty in-memory ledger.
func NewMemLedger() *MemLedger { return &MemLedger{seqs: seqTracker{}} }

// Append stores a copy of e.
func (m *MemLedger) Append(ctx context.Context, e Entry) error {
	if err := ctx.Err(); err != nil {
		return wrapErr("append", ErrLedger, "", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.appendErr != nil {
		return wrapErr("append", ErrLedger, "", m.appendErr)
	}
	if err := m.seqs.check(&e, "append"); err != nil {
		return err
	}
	m.seqs.note(&e)
	m.entries = append(m.entries, e.clone())
	return nil
}

// Entries returns copies of all entries in append order.
func (m *MemLedger) Entries(ctx context.Context) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("entries", ErrLedger, "", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, len(m.entries))
	for i, e := range m.entries {
		out[i] = e.clone()
	}
	return out, nil
}

// FailAppends makes every later Append fail with err (nil restores
// normal operation).
func (m *MemLedger) FailAppends(err error) {
	m.mu.Lock()
	m.appendErr = err
	m.mu.Unlock()
}

// seqTracker enforces what both ledgers promise: valid entries, and strictly
// increasing sequence numbers per job and client (so a duplicated,
// reordered or replayed record is caught).
type seqTracker map[ClientKey]uint64

func (s seqTracker) check(e *Entry, op string) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if last := s[ClientKey{e.Job, e.Client}]; e.Seq <= last {
		return errorf(op, ErrInvalid, fmt.Sprintf("seq %d of job %s client %s after seq %d", e.Seq, e.Job, e.Client, last))
	}
	return nil
}

func (s seqTracker) note(e *Entry) { s[ClientKey{e.Job, e.Client}] = e.Seq }
