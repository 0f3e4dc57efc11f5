package graph

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
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
	g, _ := loadFixture(t, "Edges_Trans.csv", AMLOptions{})
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
		got[x-SplitTrain]++
	}
	if got != c || c[0]+c[1]+c[2] != int64(g.NumEdges()) {
		t.Fatalf("counts %v vs %v", got, c)
	}
	if s.Of(g.Time[6]) != SplitTrain || s.Of(g.Time[9]) != SplitTest {
		t.Fatalf("first day %v, last day %v", s.Of(g.Time[6]), s.Of(g.Time[9]))
	}
	var empty AMLGraph
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
	in := AMLTransHeader + "\n1000/01/01 00:00,1,A,2,B,1,Euro,1,Euro,Cash,0\n9999/12/31 23:59,1,A,2,B,1,Euro,1,Euro,Cash,0\n"
	g, _, err := ReadAMLTrans(strings.NewReader(in), "w_Trans.csv", AMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := g.TemporalSplit()
	if s.Days() < 2_900_000 || s.Counts() != [3]int64{1, 0, 1} && s.Counts() != [3]int64{0, 1, 1} {
		t.Fatalf("days %d counts %v", s.Days(), s.Counts())
	}
}
