package privacy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// FileLedger is a Ledger in one append-only file of JSON lines, one entry
// per line. The file is opened O_APPEND and fsynced after every append, so
// an entry is on stable storage when Append returns.
//
// Crash recovery: a crash during an append can leave a final line without
// its newline. OpenFileLedger detects it, reports it (TornTail) and
// truncates it: that entry's Append never returned, so its release was never
// published. Any other line that is not a valid entry of its client's chain
// is kept in the file and skipped by readers, which report it (Verify):
// a damaged line stops no one, and is never silently lost.
//
// One process should write a ledger file at a time.
type FileLedger struct {
	mu   sync.Mutex
	f    *os.File
	path string
	size int64 // bytes of complete lines
	seqs seqTracker
	torn *TornTail
	err  error // sticky: a failed append makes the ledger fail-stop
}

// TornTail describes the incomplete final line removed on open.
type TornTail struct {
	Offset int64  // where the torn line began (the new file size)
	Bytes  int    // how many bytes were removed
	Head   string // its first bytes, for the operator's log
}

// OpenFileLedger opens or creates the ledger at path.
func OpenFileLedger(path string) (*FileLedger, error) {
	const op = "open ledger"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, wrapErr(op, ErrLedger, path, err)
	}
	l := &FileLedger{f: f, path: path, seqs: seqTracker{}}
	if err := l.recover(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func (l *FileLedger) recover() error {
	const op = "open ledger"
	b, err := io.ReadAll(io.NewSectionReader(l.f, 0, 1<<62))
	if err != nil {
		return wrapErr(op, ErrLedger, l.path, err)
	}
	recs, good := splitLines(b)
	for _, e := range Verify(recs, VerifyOptions{}).Entries {
		l.seqs.note(&e)
	}
	l.size = int64(good)
	if good < len(b) {
		head := b[good:min(len(b), good+64)]
		l.torn = &TornTail{Offset: int64(good), Bytes: len(b) - good, Head: string(head)}
		if err := l.f.Truncate(int64(good)); err != nil {
			return wrapErr(op, ErrLedger, "truncating torn tail of "+l.path, err)
		}
	}
	if len(b) == 0 || l.torn != nil {
		// A new file's directory entry, or a truncation, must be durable too.
		if err := l.f.Sync(); err != nil {
			return wrapErr(op, ErrLedger, l.path, err)
		}
		if err := syncDir(filepath.Dir(l.path)); err != nil {
			return wrapErr(op, ErrLedger, l.path, err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// TornTail reports the torn final line removed when the ledger was opened.
func (l *FileLedger) TornTail() (TornTail, bool) {
	if l.torn == nil {
		return TornTail{}, false
	}
	return *l.torn, true
}

// Path returns the ledger file's path.
func (l *FileLedger) Path() string { return l.path }

// Append writes e as one line and fsyncs. If the write or the fsync fails,
// the ledger cuts the file back to its last complete line (best effort)
// and refuses every later append: a ledger that may have lost a write is not
// trusted to take more.
func (l *FileLedger) Append(ctx context.Context, e Entry) error {
	const op = "append"
	if err := ctx.Err(); err != nil {
		return wrapErr(op, ErrLedger, l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.f == nil:
		return errorf(op, ErrClosed, l.path)
	case l.err != nil:
		return wrapErr(op, ErrLedger, l.path+" failed earlier", l.err)
	}
	if err := l.seqs.check(&e, op); err != nil {
		return err
	}
	line, err := EncodeEntry(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := l.f.Write(line); err != nil {
		return l.fail(err)
	}
	if err := l.f.Sync(); err != nil {
		return l.fail(err)
	}
	l.size += int64(len(line))
	l.seqs.note(&e)
	return nil
}

func (l *FileLedger) fail(err error) error {
	l.err = err
	_ = l.f.Truncate(l.size)
	return wrapErr("append", ErrLedger, l.path, err)
}

// Records reads every line back from the file; Pos is the line number.
func (l *FileLedger) Records(ctx context.Context) ([]Record, error) {
	const op = "records"
	if err := ctx.Err(); err != nil {
		return nil, wrapErr(op, ErrLedger, l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil, errorf(op, ErrClosed, l.path)
	}
	b := make([]byte, l.size)
	if _, err := l.f.ReadAt(b, 0); err != nil {
		return nil, wrapErr(op, ErrLedger, l.path, err)
	}
	recs, good := splitLines(b)
	if good != len(b) {
		return nil, wrapErr(op, ErrCorrupt, l.path, fmt.Errorf("incomplete line at offset %d", good))
	}
	return recs, nil
}

// Entries returns the entries that verify without a keyring (ReadLedger
// reports the rest).
func (l *FileLedger) Entries(ctx context.Context) ([]Entry, error) {
	rd, err := ReadLedger(ctx, l, VerifyOptions{})
	return rd.Entries, err
}

// Close closes the file; later calls fail with ErrClosed.
func (l *FileLedger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ReadOnlyLedger is a snapshot of a ledger file for audits: it is read
// once at open and never modified (a torn final line is reported and
// skipped, not truncated); Append always fails.
type ReadOnlyLedger struct {
	path    string
	records []Record
	torn    *TornTail
}

// OpenFileLedgerReadOnly reads the ledger file at path. Its lines are
// judged by the reader (ReadLedger), not here.
func OpenFileLedgerReadOnly(path string) (*ReadOnlyLedger, error) {
	const op = "read ledger"
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, wrapErr(op, ErrLedger, path, err)
	}
	recs, good := splitLines(b)
	r := &ReadOnlyLedger{path: path, records: recs}
	if good < len(b) {
		r.torn = &TornTail{Offset: int64(good), Bytes: len(b) - good, Head: string(b[good:min(len(b), good+64)])}
	}
	return r, nil
}

// Append fails: the snapshot is read-only.
func (r *ReadOnlyLedger) Append(context.Context, Entry) error {
	return errorf("append", ErrInvalid, "read-only ledger "+r.path)
}

// Records returns copies of the lines read at open.
func (r *ReadOnlyLedger) Records(ctx context.Context) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("records", ErrLedger, r.path, err)
	}
	out := make([]Record, len(r.records))
	for i, rec := range r.records {
		rec.Data = bytes.Clone(rec.Data)
		out[i] = rec
	}
	return out, nil
}

// Entries returns the entries that verify without a keyring.
func (r *ReadOnlyLedger) Entries(ctx context.Context) ([]Entry, error) {
	rd, err := ReadLedger(ctx, r, VerifyOptions{})
	return rd.Entries, err
}

// TornTail reports a torn final line found (and skipped) at open.
func (r *ReadOnlyLedger) TornTail() (TornTail, bool) {
	if r.torn == nil {
		return TornTail{}, false
	}
	return *r.torn, true
}

// splitLines cuts a ledger file into its complete lines, one record each
// (Pos: the line number), and returns the length of the prefix they make:
// anything after it is a torn final line.
func splitLines(b []byte) (recs []Record, good int) {
	for lineNo := uint64(1); ; lineNo++ {
		i := bytes.IndexByte(b[good:], '\n')
		if i < 0 {
			return recs, good
		}
		recs = append(recs, Record{Pos: lineNo, Where: fmt.Sprintf("line %d", lineNo), Data: b[good : good+i]})
		good += i + 1
	}
}
