package amlworld

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Attempt is one laundering attempt of a *_Patterns.txt file: the block
//
//	BEGIN LAUNDERING ATTEMPT - <TYPE>[: <detail>]
//	<transaction rows, in the *_Trans.csv layout>
//	END LAUNDERING ATTEMPT - <TYPE>
//
// followed by a blank line. Line is the 1-based line of the BEGIN line.
type Attempt struct {
	Type   Typology
	Detail string // e.g. "Max 16-degree Fan-Out"; empty when absent
	Line   int64
	Rows   []TxRow
}

const (
	amlBegin = "BEGIN LAUNDERING ATTEMPT - "
	amlEnd   = "END LAUNDERING ATTEMPT - "
)

// LoadPatterns reads a *_Patterns.txt file; see ParsePatterns.
func LoadPatterns(path string, opt Options) ([]Attempt, Issues, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Issues{}, fmt.Errorf("graph: load aml patterns: %w", err)
	}
	defer f.Close()
	return ParsePatterns(f, filepath.Base(path), opt)
}

// ParsePatterns reads the laundering attempts of a Patterns file. Blank
// lines are ignored anywhere. Malformed input — a row outside a block, an
// unknown type, an END whose type differs from its BEGIN, a BEGIN inside an
// open block, a block left open at the end, a malformed row — is handled by
// opt.Policy. Leniently: a bad row is dropped from its attempt, a block with
// an unknown type is skipped up to its END, a mismatched END or a new BEGIN
// closes the open attempt, and an attempt left open at the end is kept.
func ParsePatterns(r io.Reader, name string, opt Options) ([]Attempt, Issues, error) {
	const op = "graph: load aml patterns"
	l := newAMLLines(r, name, opt)
	var (
		out  []Attempt
		cur  *Attempt
		skip bool // inside a block whose BEGIN was bad
	)
	fail := func(err error) error {
		if e := l.bad(err); e != nil {
			return fmt.Errorf("%s: %w", op, e)
		}
		return nil
	}
	for {
		line, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, l.issues, fmt.Errorf("%s: %w", op, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte(amlBegin)):
			if cur != nil {
				cur = nil
				if e := fail(fmt.Errorf("%w: BEGIN inside the attempt begun on line %d", ErrPattern, out[len(out)-1].Line)); e != nil {
					return nil, l.issues, e
				}
			}
			skip = false
			typ, detail, err := amlParseBegin(line[len(amlBegin):])
			if err != nil {
				skip = true
				if e := fail(err); e != nil {
					return nil, l.issues, e
				}
				continue
			}
			out = append(out, Attempt{Type: typ, Detail: detail, Line: l.line})
			cur = &out[len(out)-1]
		case bytes.HasPrefix(line, []byte(amlEnd)):
			t := bytes.TrimSpace(line[len(amlEnd):])
			switch {
			case skip:
				skip = false
			case cur == nil:
				if e := fail(fmt.Errorf("%w: END %q without BEGIN", ErrPattern, amlClip(t))); e != nil {
					return nil, l.issues, e
				}
			case string(t) != cur.Type.String():
				begun := cur.Line
				cur = nil
				if e := fail(fmt.Errorf("%w: END %q closes %s begun on line %d", ErrPattern, amlClip(t), out[len(out)-1].Type, begun)); e != nil {
					return nil, l.issues, e
				}
			default:
				cur = nil
			}
		case skip:
			// Rows of a block whose BEGIN was rejected.
		case cur == nil:
			if e := fail(fmt.Errorf("%w: row outside a laundering attempt", ErrPattern)); e != nil {
				return nil, l.issues, e
			}
		default:
			row, err := ParseTxRow(line)
			if err != nil {
				if e := fail(err); e != nil {
					return nil, l.issues, e
				}
				continue
			}
			cur.Rows = append(cur.Rows, row)
		}
	}
	if cur != nil {
		if e := fail(fmt.Errorf("%w: attempt begun on line %d is not closed by END", ErrPattern, cur.Line)); e != nil {
			return nil, l.issues, e
		}
	}
	l.done()
	return out, l.issues, nil
}

// amlParseBegin parses "<TYPE>[: <detail>]" of a BEGIN line.
func amlParseBegin(b []byte) (Typology, string, error) {
	typ, detail := b, []byte(nil)
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		typ, detail = b[:i], bytes.TrimSpace(b[i+1:])
	}
	typ = bytes.TrimSpace(typ)
	t, ok := TypologyByName(string(typ))
	if !ok {
		return 0, "", fmt.Errorf("%w: unknown typology %q", ErrPattern, amlClip(typ))
	}
	return t, string(detail), nil
}

// AppendBegin appends the BEGIN line of an attempt (without line break).
// AMLworld writes two spaces after the colon, and so does graphfed.
func AppendBegin(dst []byte, t Typology, detail string) []byte {
	dst = append(dst, amlBegin...)
	dst = append(dst, t.String()...)
	if detail != "" {
		dst = append(dst, ":  "...)
		dst = append(dst, detail...)
	}
	return dst
}

// AppendEnd appends the END line of an attempt (without line break).
func AppendEnd(dst []byte, t Typology) []byte {
	dst = append(dst, amlEnd...)
	return append(dst, t.String()...)
}

// RowsPerTypology counts the rows of the attempts by typology.
func RowsPerTypology(attempts []Attempt) [NumTypologies]int64 {
	var c [NumTypologies]int64
	for i := range attempts {
		c[attempts[i].Type] += int64(len(attempts[i].Rows))
	}
	return c
}
