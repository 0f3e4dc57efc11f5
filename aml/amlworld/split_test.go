package amlworld

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

func TestAMLBestSplit(t *testing.T) {
	cases := []struct {
		name string
		days []int64
		i, j int
	}{
		{"ten equal days", []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, 6, 8},
		{"one day", []int64{7}, 1, 1},
		{"two days", []int64{5, 5}, 0, 1},
		{"empty days", []int64{0, 0, 0}, 0, 1},
		// Heavy first day: the search balances transactions, not days.
		{"front loaded", []int64{60, 10, 10, 10, 10}, 1, 3},
		// A 5-day tail of laundering-only rows (as in the published files)
		// barely moves the boundaries.
		{"thin tail", []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 1, 1, 1, 1, 1}, 6, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			i, j := amlBestSplit(c.days, amlSplitTargets)
			if i != c.i || j != c.j {
				t.Fatalf("split (%d,%d), want (%d,%d)", i, j, c.i, c.j)
			}
		})
	}
}

func TestAMLTemporalSplit(t *testing.T) {
	g, _ := loadFixture(t, "Edges_Trans.csv", Options{})
	s := g.TemporalSplit()
	// Rows span 2022/08/31 .. 2022/09/06: 7 days counted from 08/31.
	if s.Days() != 7 || s.Origin != 1661990400-86400 {
		t.Fatalf("days %d origin %d", s.Days(), s.Origin)
	}
	want := []int64{1, 5, 1, 1, 0, 1, 1}
	for d, n := range want {
		if s.DayCount[d] != n {
			t.Fatalf("day counts %v, want %v", s.DayCount, want)
		}
	}
	sp := g.EdgeSplits(&s)
	c := s.Counts()
	var got [3]int64
	for _, x := range sp {
		got[x-graph.SplitTrain]++
	}
	if got != c || c[0]+c[1]+c[2] != int64(g.NumEdges()) {
		t.Fatalf("counts %v vs %v", got, c)
	}
	if c := s.cutoffs(); c.Of(g.Time[6]) != graph.SplitTrain || c.Of(g.Time[9]) != graph.SplitTest {
		t.Fatalf("first day %v, last day %v", c.Of(g.Time[6]), c.Of(g.Time[9]))
	}
	var empty Graph
	if e := empty.TemporalSplit(); e.Days() != 0 {
		t.Fatal("empty graph has days")
	}
}

// TestAMLBestSplitBruteForce checks the pruned search against Multi-GNN's
// quadratic one on random day counts, empty days and ties included.
func TestAMLBestSplitBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 3000; it++ {
		n := 1 + r.IntN(25)
		days := make([]int64, n)
		for k := range days {
			switch r.IntN(4) {
			case 0:
			case 1:
				days[k] = int64(r.IntN(3))
			default:
				days[k] = int64(r.IntN(1000))
			}
		}
		gi, gj := amlBestSplit(days, amlSplitTargets)
		wi, wj := bruteSplit(days)
		if gi != wi || gj != wj {
			t.Fatalf("days %v: got (%d,%d) want (%d,%d)", days, gi, gj, wi, wj)
		}
	}
}

func bruteSplit(days []int64) (int, int) {
	n := len(days)
	if n < 2 {
		return n, n
	}
	prefix := make([]int64, n+1)
	for k, c := range days {
		prefix[k+1] = prefix[k] + c
	}
	if prefix[n] == 0 {
		return 0, 1
	}
	bi, bj, best := 0, 1, math.Inf(1)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if sc := amlSplitScore(prefix, i, j, amlSplitTargets); sc < best {
				bi, bj, best = i, j, sc
			}
		}
	}
	return bi, bj
}

func TestAMLSplitWideSpan(t *testing.T) {
	// Two rows 8,000 years apart: millions of days, still fast.
	in := TransHeader + "\n1000/01/01 00:00,1,A,2,B,1,Euro,1,Euro,Cash,0\n9999/12/31 23:59,1,A,2,B,1,Euro,1,Euro,Cash,0\n"
	g, _, err := ReadTrans(strings.NewReader(in), "w_Trans.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := g.TemporalSplit()
	if s.Days() < 2_900_000 || s.Counts() != [3]int64{1, 0, 1} && s.Counts() != [3]int64{0, 1, 1} {
		t.Fatalf("days %d counts %v", s.Days(), s.Counts())
	}
}

// TestCutoffsOfDays: Cutoffs.Of puts a transaction in the part of its day
// index (Day(t - Origin) against the split's first validation and test
// days), at and around every boundary, before the first day and after the
// last.
func TestCutoffsOfDays(t *testing.T) {
	g, _ := loadFixture(t, "Edges_Trans.csv", Options{})
	for _, s := range []DaySplit{g.TemporalSplit(), {Origin: 86400, TrainEnd: 2, ValEnd: 5}, {Origin: -3 * 86400, TrainEnd: 0, ValEnd: 1}, {}} {
		c := s.cutoffs()
		times := slices.Clone(g.Time)
		for _, b := range []int64{s.Origin, c.TrainEnd, c.ValEnd, s.Origin + 40*86400, s.Origin - 40*86400} {
			times = append(times, b-86401, b-86400, b-1, b, b+1, b+86399)
		}
		for _, tm := range times {
			want := graph.SplitTest
			switch d := Day(tm - s.Origin); {
			case d < int64(s.TrainEnd):
				want = graph.SplitTrain
			case d < int64(s.ValEnd):
				want = graph.SplitVal
			}
			if got := c.Of(tm); got != want {
				t.Fatalf("split %+v, time %d: %v, want %v", s, tm, got, want)
			}
		}
	}
}
