package privacy

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// MemLedger is the in-memory Ledger double: the same validation and
// ordering rules as FileLedger, no durability. It stores entries encoded,
// as the other ledgers do, so readers verify what it holds the same way.
// For tests and simulations; its appends can be made to fail to exercise
// the gate's error paths, and AppendRaw stores what a hostile writer would.
type MemLedger struct {
	mu        sync.Mutex
	records   [][]byte
	seqs      seqTracker
	appendErr error
}

// NewMemLedger returns an empty in-memory ledger.
func NewMemLedger() *MemLedger { return &MemLedger{seqs: seqTracker{}} }

// Append stores e, encoded.
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
	b, err := EncodeEntry(e)
	if err != nil {
		return err
	}
	m.seqs.note(&e)
	m.records = append(m.records, b)
	return nil
}

// AppendRaw stores data as it is, unchecked: what a party with write
// access to a shared ledger could store. For tests of the readers.
func (m *MemLedger) AppendRaw(data []byte) {
	m.mu.Lock()
	m.records = append(m.records, slices.Clone(data))
	m.mu.Unlock()
}

// Records returns copies of the stored records; Pos is the index from 1.
func (m *MemLedger) Records(ctx context.Context) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("records", ErrLedger, "", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, len(m.records))
	for i, b := range m.records {
		out[i] = Record{Pos: uint64(i + 1), Where: fmt.Sprintf("record %d", i+1), Data: slices.Clone(b)}
	}
	return out, nil
}

// Entries returns the entries that verify without a keyring (ReadLedger
// reports the rest), in append order.
func (m *MemLedger) Entries(ctx context.Context) ([]Entry, error) {
	rd, err := ReadLedger(ctx, m, VerifyOptions{})
	return rd.Entries, err
}

// FailAppends makes every later Append fail with err (nil restores
// normal operation).
func (m *MemLedger) FailAppends(err error) {
	m.mu.Lock()
	m.appendErr = err
	m.mu.Unlock()
}

// seqTracker enforces what every ledger promises its writer: valid
// entries, and strictly increasing sequence numbers per job and client
// (so a duplicated, reordered or replayed append is refused, wrapping
// ErrChainMoved).
type seqTracker map[ClientKey]uint64

func (s seqTracker) check(e *Entry, op string) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if last := s[ClientKey{e.Job, e.Client}]; e.Seq <= last {
		return wrapErr(op, ErrInvalid, fmt.Sprintf("seq %d of job %s client %s after seq %d", e.Seq, e.Job, e.Client, last), ErrChainMoved)
	}
	return nil
}

func (s seqTracker) note(e *Entry) { s[ClientKey{e.Job, e.Client}] = e.Seq }
