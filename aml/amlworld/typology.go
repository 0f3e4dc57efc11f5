package amlworld

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
)

// txKey identifies a transaction by its accounts, time and amount paid:
// how a Patterns row names a row of the transactions file.
type txKey struct {
	src, dst int32
	t        int64
	paid     uint64
}

// MatchTypologies marks each transaction of g listed in an attempt with
// the attempt's typology (-1 elsewhere) and counts the attempts' rows found
// in g. g may be a whole world or one bank's view: rows of attempts that g
// does not hold are skipped.
func MatchTypologies(g *Graph, attempts []Attempt) ([]int8, int) {
	want := map[txKey]int8{}
	for _, at := range attempts {
		for _, r := range at.Rows {
			s, ok1 := g.Account(r.FromBank, r.FromAccount)
			d, ok2 := g.Account(r.ToBank, r.ToAccount)
			if ok1 && ok2 {
				want[txKey{s, d, r.Time, math.Float64bits(r.AmountPaid)}] = int8(at.Type)
			}
		}
	}
	typ := make([]int8, g.NumEdges())
	found := map[txKey]bool{}
	for e := range typ {
		k := txKey{g.Src[e], g.Dst[e], g.Time[e], math.Float64bits(g.AmountPaid[e])}
		t, ok := want[k]
		if !ok {
			typ[e] = -1
			continue
		}
		typ[e] = t
		found[k] = true
	}
	return typ, len(found)
}

// LoadPatternsBeside reads the *_Patterns.txt beside a transactions file,
// when there is one; nil without (a downloaded file may come alone).
func LoadPatternsBeside(transPath string) ([]Attempt, error) {
	ppath, err := SiblingPath(transPath, "Patterns")
	if err != nil {
		return nil, nil
	}
	if _, err := os.Stat(ppath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	attempts, _, err := LoadPatterns(ppath, Options{})
	if err != nil {
		return nil, fmt.Errorf("aml: patterns beside %s: %w", transPath, err)
	}
	return attempts, nil
}
