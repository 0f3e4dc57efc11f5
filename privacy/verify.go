package privacy

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"
)

// VerifyOptions configure a Verifier.
type VerifyOptions struct {
	// Keys, when set, requires every entry to carry a valid signature by
	// its client's key; nil accepts unsigned entries (a plain simulation
	// has no keys) and ignores signatures.
	Keys KeyVerifier
	// Job, when set, skips entries of other jobs silently (a file ledger
	// may hold several jobs); their records are neither kept nor rejected.
	Job string
}

// Verifier is the pure state machine every ledger reader runs: records go
// in, in ledger order, and each comes out accepted (possibly with a chain
// break), rejected or ignored. It does no I/O.
type Verifier struct {
	opts  VerifyOptions
	heads map[ClientKey]chainHead
}

// NewVerifier returns a verifier with no chain heads.
func NewVerifier(opts VerifyOptions) *Verifier {
	return &Verifier{opts: opts, heads: map[ClientKey]chainHead{}}
}

// Verdict is the outcome of one record: Entry is set when accepted (and
// Break then when it does not link), Reject when skipped; all nil when the
// record belongs to another job.
type Verdict struct {
	Entry  *Entry
	Break  *ChainBreak
	Reject *Rejection
}

// Step judges one record.
func (v *Verifier) Step(r Record) Verdict {
	rej := func(e *Entry, reason RejectReason, format string, args ...any) Verdict {
		x := Rejection{Pos: r.Pos, Where: r.Where, Job: r.Job, Client: r.Client, Reason: reason, Detail: fmt.Sprintf(format, args...)}
		if e != nil {
			x.Job, x.Client, x.Seq = e.Job, e.Client, e.Seq
		}
		return Verdict{Reject: &x}
	}
	e, err := DecodeEntry(r.Data)
	if err != nil {
		return rej(nil, RejectMalformed, "%v", err)
	}
	if r.Client != "" && (e.Job != r.Job || e.Client != r.Client) {
		return rej(&e, RejectMisfiled, "entry of %s/%s filed under %s/%s", e.Job, e.Client, r.Job, r.Client)
	}
	if v.opts.Job != "" && e.Job != v.opts.Job {
		return Verdict{}
	}
	d, err := e.Digest()
	if err != nil {
		return rej(&e, RejectMalformed, "%v", err)
	}
	if k := v.opts.Keys; k != nil {
		if len(e.Sig) == 0 {
			return rej(&e, RejectUnsigned, "no signature; the keyring requires one by %s", e.Client)
		}
		if err := k.VerifyEntry(e.Job, e.Client, d[:], e.Sig); err != nil {
			return rej(&e, RejectForged, "%v", err)
		}
	}
	key := ClientKey{e.Job, e.Client}
	head := v.heads[key]
	if e.Seq <= head.seq {
		return rej(&e, RejectOutOfChain,
			"seq %d is not above the chain head seq %d: a replayed, rewritten or reordered entry", e.Seq, head.seq)
	}
	out := Verdict{Entry: &e}
	brk := func(kind BreakKind, format string, args ...any) *ChainBreak {
		return &ChainBreak{Pos: r.Pos, Where: r.Where, Job: e.Job, Client: e.Client, Seq: e.Seq, After: head.seq,
			Kind: kind, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case e.Seq != head.seq+1:
		out.Break = brk(BreakGap, "seqs %d to %d are missing", head.seq+1, e.Seq-1)
	case e.Prev != head.digest:
		out.Break = brk(BreakLink, "prev %s is not the digest %s of seq %d: that entry was rewritten or entries were reordered",
			short(e.Prev), short(head.digest), head.seq)
	}
	v.heads[key] = chainHead{seq: e.Seq, digest: hex.EncodeToString(d[:])}
	return out
}

// Head is the seq and hex digest of client's last accepted entry (0, ""
// before any): what its next entry continues.
func (v *Verifier) Head(job, client string) (uint64, string) {
	h := v.heads[ClientKey{job, client}]
	return h.seq, h.digest
}

func short(h string) string {
	switch {
	case h == "":
		return `""`
	case len(h) > 12:
		return h[:12]
	}
	return h
}

// Reading is a ledger read back and verified.
type Reading struct {
	Records  int          // records read
	Entries  []Entry      // accepted, in ledger order
	Stored   []time.Time  // when storage took each of Entries (zero: not said)
	Breaks   []ChainBreak // accepted entries that do not link to their predecessor
	Rejected []Rejection  // skipped records
	Signed   bool         // verified against a keyring
}

// Verify runs records through a Verifier.
func Verify(records []Record, opts VerifyOptions) Reading {
	v := NewVerifier(opts)
	rd := Reading{Signed: opts.Keys != nil, Entries: []Entry{}}
	for _, r := range records {
		rd.step(v, r)
	}
	return rd
}

// step judges one more record and keeps what the reading reports: the
// entry if accepted, the break or the rejection, never the record's bytes.
func (rd *Reading) step(v *Verifier, r Record) {
	rd.Records++
	out := v.Step(r)
	if out.Entry != nil {
		rd.Entries = append(rd.Entries, *out.Entry)
		rd.Stored = append(rd.Stored, r.At)
	}
	if out.Break != nil {
		rd.Breaks = append(rd.Breaks, *out.Break)
	}
	if out.Reject != nil {
		rd.Rejected = append(rd.Rejected, *out.Reject)
	}
}

// RecordWalker is a Ledger that hands its records to a reader one at a
// time, in ledger order, stopping at fn's first error. ReadLedger prefers
// it: the reader then holds what it keeps (the verified entries and a
// line per rejected record), not every record, so junk stored beside the
// entries, up to the storage's limits, costs a reader time but not memory.
type RecordWalker interface {
	WalkRecords(ctx context.Context, fn func(Record) error) error
}

// ReadLedger reads every record of l and verifies it. Only a failure to
// read is an error: what the records hold is judged, never refused.
func ReadLedger(ctx context.Context, l Ledger, opts VerifyOptions) (Reading, error) {
	if w, ok := l.(RecordWalker); ok {
		v := NewVerifier(opts)
		rd := Reading{Signed: opts.Keys != nil, Entries: []Entry{}}
		if err := w.WalkRecords(ctx, func(r Record) error { rd.step(v, r); return nil }); err != nil {
			return Reading{}, wrapErr("read ledger", ErrLedger, "", err)
		}
		return rd, nil
	}
	recs, err := l.Records(ctx)
	if err != nil {
		return Reading{}, wrapErr("read ledger", ErrLedger, "", err)
	}
	return Verify(recs, opts), nil
}
