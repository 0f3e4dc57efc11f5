package amlworld

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Policy says what the AMLworld parsers do with a malformed row.
type Policy uint8

const (
	// Strict fails on the first malformed row with its file and line.
	Strict Policy = iota
	// Lenient skips malformed rows, counts them and keeps the first few
	// (Options.MaxIssues) with file and line in Issues.
	Lenient
)

// Options configures the AMLworld parsers. The zero value is strict.
type Options struct {
	Policy Policy
	// MaxIssues bounds the row errors kept in Issues.First under the
	// lenient policy; all of them are counted. 0 means 20.
	MaxIssues int
	// Progress, when set, is called now and then with the bytes read so far
	// and the total size (0 when unknown).
	Progress func(done, total int64)
	// Size is the input's total size in bytes for Progress (LoadTrans
	// fills it from the file).
	Size int64
}

// RowError is a malformed line: the file, the 1-based line number and the
// cause, which wraps one of the Err* kinds.
type RowError struct {
	File string
	Line int64
	Err  error
}

func (e *RowError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *RowError) Unwrap() error { return e.Err }

// Issues is what a lenient parse skipped: how many lines and the first
// few of them.
type Issues struct {
	Count int64
	First []*RowError
}

// amlMaxLine bounds one line (it is the reader's buffer size); longer lines
// are malformed.
const amlMaxLine = 64 << 10

// amlLines reads a file line by line through one bufio.Reader without
// allocating per line: a returned line aliases the reader's buffer and is
// valid until the next call.
type amlLines struct {
	r      *bufio.Reader
	name   string
	line   int64
	read   int64
	opt    Options
	issues Issues
	nextPr int64
}

func newAMLLines(r io.Reader, name string, opt Options) *amlLines {
	if opt.MaxIssues <= 0 {
		opt.MaxIssues = 20
	}
	return &amlLines{r: bufio.NewReaderSize(r, amlMaxLine), name: name, opt: opt}
}

// next returns the next line without its line break ("\n" or "\r\n") and, on
// the first line, without a UTF-8 byte-order mark. It returns io.EOF after
// the last line. A line longer than amlMaxLine is skipped and reported
// through l.bad (which may end the parse under the strict policy).
func (l *amlLines) next() ([]byte, error) {
	for {
		b, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A very long line: consume the rest of it and report it.
			l.line++
			n := int64(len(b))
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = l.r.ReadSlice('\n')
				n += int64(len(b))
			}
			l.read += n
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s:%d: %w", l.name, l.line, err)
			}
			if e := l.bad(fmt.Errorf("%w: line of %d bytes exceeds %d", ErrLine, n, amlMaxLine)); e != nil {
				return nil, e
			}
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			continue
		}
		if len(b) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%s:%d: %w", l.name, l.line+1, err)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", l.name, l.line+1, err)
		}
		l.line++
		l.read += int64(len(b))
		if l.opt.Progress != nil && l.read >= l.nextPr {
			l.opt.Progress(l.read, l.opt.Size)
			l.nextPr = l.read + 4<<20
		}
		b = bytes.TrimSuffix(b, []byte{'\n'})
		b = bytes.TrimSuffix(b, []byte{'\r'})
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		return b, nil
	}
}

// bad records a malformed current line. Under the strict policy it returns
// the row error, which ends the parse; under the lenient one it counts the
// error, keeps it if there is room, and returns nil.
func (l *amlLines) bad(err error) error {
	re := &RowError{File: l.name, Line: l.line, Err: err}
	if l.opt.Policy == Strict {
		return re
	}
	l.issues.Count++
	if len(l.issues.First) < l.opt.MaxIssues {
		l.issues.First = append(l.issues.First, re)
	}
	return nil
}

// done reports final progress.
func (l *amlLines) done() {
	if l.opt.Progress != nil {
		l.opt.Progress(l.read, l.opt.Size)
	}
}

// header reads the first line and checks it is exactly want; op prefixes
// the error.
func (l *amlLines) header(op, want string) error {
	head, err := l.next()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %s:1: %w: empty file, want %q", op, l.name, ErrHeader, want)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if string(head) != want {
		return fmt.Errorf("%s: %s:1: %w %q, want %q", op, l.name, ErrHeader, amlClip(head), want)
	}
	return nil
}
