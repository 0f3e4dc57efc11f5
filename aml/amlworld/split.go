package amlworld

import (
	"math"

	"graphfed/graph"
)

// DaySplit is the temporal train/validation/test split of an AMLworld
// graph, as Multi-GNN (Egressy et al. 2024, data_loading.py) computes it:
//
//  1. Day k is the k-th UTC calendar day counted from the day of the earliest
//     transaction: day(e) = floor((Time[e] - Origin) / 86400), with Origin
//     the midnight starting that first day. (Multi-GNN counts from midnight
//     of the first row's day minus 10 s; for a file in time order this is
//     the same partition of rows.) Days without transactions count.
//  2. With n_k transactions on day k, the split is a pair of day boundaries
//     0 <= i < j <= Days-1: days [0,i) train, [i,j) validation, [j,Days)
//     test. Of all such pairs, in lexicographic order, the first one
//     minimising max over the three parts of |share - target| / target is
//     chosen, where share is the part's fraction of all transactions and the
//     targets are 60%, 20%, 20%.
//
// So the split is by whole days and roughly 60/20/20 by transactions, not by
// days. With a single day everything is training data. DaySplit chooses
// the days; which part a transaction falls in is Cutoffs.Of, the one
// definition, which a bank holding only its own rows applies too
// (cutoffs.go).
type DaySplit struct {
	Origin   int64   // Unix seconds of midnight UTC of the first day
	DayCount []int64 // transactions per day
	TrainEnd int     // first validation day (i)
	ValEnd   int     // first test day (j)
}

// amlSplitTargets are Multi-GNN's train, validation and test shares.
var amlSplitTargets = [3]float64{0.6, 0.2, 0.2}

// Days is the number of calendar days the graph spans.
func (s *DaySplit) Days() int { return len(s.DayCount) }

// Day is the day index of Unix time t (may be outside [0, Days)).
func (s *DaySplit) Day(t int64) int { return int(Day(t - s.Origin)) }

// cutoffs is the split's day boundaries as instants (without the time
// range, which the split does not know).
func (s *DaySplit) cutoffs() Cutoffs {
	return Cutoffs{Origin: s.Origin, TrainEnd: s.Origin + int64(s.TrainEnd)*86400, ValEnd: s.Origin + int64(s.ValEnd)*86400}
}

// Counts returns the number of transactions in train, validation and test.
func (s *DaySplit) Counts() [3]int64 {
	var c [3]int64
	for d, n := range s.DayCount {
		switch {
		case d < s.TrainEnd:
			c[0] += n
		case d < s.ValEnd:
			c[1] += n
		default:
			c[2] += n
		}
	}
	return c
}

// TemporalSplit computes the day split of g (see DaySplit). An empty
// graph has no days and puts nothing anywhere.
func (g *Graph) TemporalSplit() DaySplit {
	if len(g.Time) == 0 {
		return DaySplit{}
	}
	lo, hi := g.Time[0], g.Time[0]
	for _, t := range g.Time {
		lo, hi = min(lo, t), max(hi, t)
	}
	s := DaySplit{Origin: Day(lo) * 86400}
	s.DayCount = make([]int64, Day(hi-s.Origin)+1)
	for _, t := range g.Time {
		s.DayCount[Day(t-s.Origin)]++
	}
	s.TrainEnd, s.ValEnd = amlBestSplit(s.DayCount, amlSplitTargets)
	return s
}

// amlBestSplit returns Multi-GNN's day boundaries (i, j) for daily counts:
// the lexicographically first pair 0 <= i < j < len(days) minimising
// amlSplitScore. Multi-GNN tries every pair; that is quadratic in the days
// a file spans (a corrupt timestamp can make it millions), so for each i
// only the j that can win are scored. With a = share before i and b = share
// in [i,j), the score is max(A, f(b)) where A = |a-t0|/t0 is fixed and
// f(b) = max(|b-t1|/t1, |1-a-b-t2|/t2) is convex in b, and b grows with j.
// The winners are therefore the first j whose f(b) <= A (all of those tie
// at A), or else the j on either side of f's minimiser. A brute-force test
// checks this against the quadratic search.
func amlBestSplit(days []int64, target [3]float64) (int, int) {
	n := len(days)
	if n < 2 {
		return n, n
	}
	prefix := make([]int64, n+1)
	for k, c := range days {
		prefix[k+1] = prefix[k] + c
	}
	total := float64(prefix[n])
	if total == 0 {
		return 0, 1
	}
	t0, t1, t2 := target[0], target[1], target[2]
	// first returns the smallest j in (i, n) with prefix[j] >= x, or n.
	first := func(i int, x float64) int {
		lo, hi := i+1, n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if float64(prefix[m]) >= x {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return lo
	}
	bi, bj, best := 0, 1, math.Inf(1)
	for i := 0; i < n-1; i++ {
		if i > 0 && prefix[i] == prefix[i-1] {
			// Day i-1 is empty: boundary i scores as i-1 does, with fewer
			// j to choose from, so it cannot come first.
			continue
		}
		a := float64(prefix[i]) / total
		A := math.Abs(a-t0) / t0
		lo := max(t1-t1*A, 1-a-t2-t2*A) // f(b) <= A needs b >= lo
		c1, c2 := t1, 1-a-t2
		bstar := (c1*t2 + c2*t1) / (t1 + t2) // f's minimiser
		cands := [6]int{}
		k := 0
		for _, x := range []float64{a + lo, a + bstar} {
			j := first(i, x*total)
			cands[k], cands[k+1], cands[k+2] = j-1, j, j+1
			k += 3
		}
		for _, j := range cands {
			if j <= i || j >= n {
				continue
			}
			j = first(i, float64(prefix[j])) // earliest j with the same share
			if sc := amlSplitScore(prefix, i, j, target); sc < best || sc == best && (i < bi || i == bi && j < bj) {
				bi, bj, best = i, j, sc
			}
		}
	}
	return bi, bj
}

// amlSplitScore is Multi-GNN's score of boundaries (i, j): the largest
// relative error of the three parts' shares against their targets.
func amlSplitScore(prefix []int64, i, j int, target [3]float64) float64 {
	n := len(prefix) - 1
	total := float64(prefix[n])
	parts := [3]float64{float64(prefix[i]), float64(prefix[j] - prefix[i]), float64(prefix[n] - prefix[j])}
	score := 0.0
	for k, p := range parts {
		score = max(score, math.Abs(p/total-target[k])/target[k])
	}
	return score
}

// EdgeSplits returns the split of every edge under s (Cutoffs.Of).
func (g *Graph) EdgeSplits(s *DaySplit) []graph.Split {
	c := s.cutoffs()
	out := make([]graph.Split, len(g.Time))
	for e, t := range g.Time {
		out[e] = c.Of(t)
	}
	return out
}
