package dsim

import (
	"context"
	"fmt"
	"time"

	"graphfed/privacy"
)

// ledgerReader reads an agent's ledger after each of its steps, as
// privacy.MemLedger.Entries does — every record through one
// privacy.Verifier without keys, in ledger order, the accepted entries
// kept — but judges each record once. Entries builds a new verifier and
// decodes, digests and re-links the whole chain on every call; the
// simulator calls it after every agent step, so a run paid for its
// ledgers quadratically, and that was most of its time since the ledger
// became signed and hash-chained (e509568, merged at 1b6075e: about 300
// seeds/s before, 75–110 after). A Verifier's verdict on a record depends
// only on the records before it, and a MemLedger only grows, so judging
// the new records alone with the verifier kept from the last read gives
// the same entries in the same order: traces and results are unchanged.
type ledgerReader struct {
	v       *privacy.Verifier
	read    int             // records already judged
	entries []privacy.Entry // the accepted ones, in ledger order
	odd     int             // records rejected, or accepted with a chain break
}

// Entries returns the ledger's accepted entries, judging only the records
// appended since the last call. The slice is the reader's: callers read
// it and must not change its elements (its capacity is clipped, so an
// append by a caller copies).
func (r *ledgerReader) Entries(ctx context.Context, l *privacy.MemLedger) ([]privacy.Entry, error) {
	recs, err := l.Records(ctx)
	if err != nil {
		return nil, err
	}
	if len(recs) < r.read {
		// A MemLedger never forgets a record; should one shrink, the
		// incremental reading would be wrong, so say so.
		return nil, fmt.Errorf("ledger shrank from %d to %d records", r.read, len(recs))
	}
	if r.v == nil {
		r.v, r.entries = privacy.NewVerifier(privacy.VerifyOptions{}), []privacy.Entry{}
	}
	for _, rec := range recs[r.read:] {
		out := r.v.Step(rec)
		if out.Entry != nil {
			r.entries = append(r.entries, *out.Entry)
		}
		if out.Reject != nil || out.Break != nil {
			r.odd++
		}
	}
	r.read = len(recs)
	return r.entries[:len(r.entries):len(r.entries)], nil
}

// wholeReading is the reading privacy.ReadLedger makes of the ledgers one
// after the other (VerifyOptions{Job: job}), composed from the parts'
// readers instead of decoding and digesting every record a second time
// (the finished job's audit, ledgerWhole, did that, a third of a run).
// It is exact when the parts are clean: no record rejected or out of its
// chain (their positions and places would be the part's, not the whole's),
// every entry of the job (the whole's reading skips other jobs'), and no
// client in two parts (a verifier keeps one chain head per job and client,
// so records of disjoint clients do not touch one another's verdicts).
// Otherwise ok is false and the caller reads the whole.
func wholeReading(ctx context.Context, job string, parts []*ledgerReader, ledgers []*privacy.MemLedger) (privacy.Reading, bool, error) {
	rd := privacy.Reading{Entries: []privacy.Entry{}}
	owner := map[string]int{} // client -> the part its entries are in
	for i, r := range parts {
		entries, err := r.Entries(ctx, ledgers[i])
		if err != nil {
			return privacy.Reading{}, false, err
		}
		if r.odd > 0 {
			return privacy.Reading{}, false, nil
		}
		for _, e := range entries {
			if p, ok := owner[e.Client]; e.Job != job || ok && p != i {
				return privacy.Reading{}, false, nil
			}
			owner[e.Client] = i
		}
		rd.Records += r.read
		rd.Entries = append(rd.Entries, entries...)
	}
	if len(rd.Entries) > 0 {
		// A MemLedger's records say nothing of when they were stored.
		rd.Stored = make([]time.Time, len(rd.Entries))
	}
	return rd, true, nil
}
