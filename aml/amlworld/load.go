package amlworld

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// LoadTrans reads an AMLworld *_Trans.csv file into a Graph named
// after the file, streaming it line by line: the file is never held in
// memory, only the graph's arrays. Malformed rows are handled by opt.Policy
// (see Options); under the lenient policy the skipped rows are in the
// returned Issues. A missing or wrong header fails under either policy.
func LoadTrans(path string, opt Options) (*Graph, Issues, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Issues{}, fmt.Errorf("graph: load aml trans: %w", err)
	}
	defer f.Close()
	if opt.Size == 0 {
		if st, err := f.Stat(); err == nil {
			opt.Size = st.Size()
		}
	}
	return readAMLTrans(f, filepath.Base(path), opt)
}

// ReadTrans is LoadTrans on a reader; name labels errors and the graph.
func ReadTrans(r io.Reader, name string, opt Options) (*Graph, Issues, error) {
	return readAMLTrans(r, name, opt)
}

// amlSampleRows is how many rows the loader reads before it sizes the edge
// arrays from the average row length and opt.Size.
const amlSampleRows = 4096

func readAMLTrans(r io.Reader, name string, opt Options) (*Graph, Issues, error) {
	const op = "graph: load aml trans"
	l := newAMLLines(r, name, opt)
	g := NewGraph(amlPrefix(name))
	if err := l.header(op, TransHeader); err != nil {
		return nil, l.issues, err
	}
	var f amlFields
	var key []byte
	for {
		line, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, l.issues, fmt.Errorf("%s: %w", op, err)
		}
		if len(line) == 0 {
			continue // blank lines carry no row
		}
		if err := f.parse(line); err != nil {
			if e := l.bad(err); e != nil {
				return nil, l.issues, fmt.Errorf("%s: %w", op, e)
			}
			continue
		}
		s := g.node(f.fromBank, f.fromAcct, &key)
		d := g.node(f.toBank, f.toAcct, &key)
		g.add(s, d, f.time, f.amountPaid, f.amountRecv, f.payCur, f.recvCur, f.format, f.label)
		if len(g.Src) == amlSampleRows && opt.Size > l.read {
			// Size the nine edge arrays once, 3% over the estimate, rather
			// than let append double them (which would peak at twice).
			est := float64(opt.Size) / float64(l.read) * amlSampleRows * 1.03
			if est < 1<<31 {
				g.reserve(int(est))
			}
		}
	}
	l.done()
	return g, l.issues, nil
}

// reserve grows the edge arrays' capacity to n, keeping their contents.
func (g *Graph) reserve(n int) {
	g.Src = slices.Grow(g.Src, n-len(g.Src))
	g.Dst = slices.Grow(g.Dst, n-len(g.Dst))
	g.Time = slices.Grow(g.Time, n-len(g.Time))
	g.AmountPaid = slices.Grow(g.AmountPaid, n-len(g.AmountPaid))
	g.AmountReceived = slices.Grow(g.AmountReceived, n-len(g.AmountReceived))
	g.PayCurrency = slices.Grow(g.PayCurrency, n-len(g.PayCurrency))
	g.RecvCurrency = slices.Grow(g.RecvCurrency, n-len(g.RecvCurrency))
	g.Format = slices.Grow(g.Format, n-len(g.Format))
	g.Label = slices.Grow(g.Label, n-len(g.Label))
}

// amlPrefix is the dataset prefix of an AMLworld file name:
// "HI-Small_Trans.csv" -> "HI-Small".
func amlPrefix(name string) string {
	for _, suf := range []string{"_Trans.csv", "_Patterns.txt", "_accounts.csv"} {
		if len(name) > len(suf) && name[len(name)-len(suf):] == suf {
			return name[:len(name)-len(suf)]
		}
	}
	return name
}

// SiblingPath returns the path of another file of the same AMLworld set:
// SiblingPath("d/HI-Small_Trans.csv", "Patterns") is
// "d/HI-Small_Patterns.txt". kind is "Trans", "Patterns" or "accounts".
func SiblingPath(path, kind string) (string, error) {
	dir, base := filepath.Split(path)
	p := amlPrefix(base)
	if p == base {
		return "", fmt.Errorf("graph: aml sibling: %q is not named <prefix>_Trans.csv, _Patterns.txt or _accounts.csv", base)
	}
	switch kind {
	case "Trans":
		return dir + p + "_Trans.csv", nil
	case "Patterns":
		return dir + p + "_Patterns.txt", nil
	case "accounts":
		return dir + p + "_accounts.csv", nil
	}
	return "", fmt.Errorf("graph: aml sibling: unknown kind %q", kind)
}

// amlClip shortens a line for an error message.
func amlClip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
