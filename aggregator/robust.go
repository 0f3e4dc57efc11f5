package aggregator

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Robust aggregation rules for the averaging strategies (issue 29): what
// a round's vectors turn into when one bank may send scaled updates.
const (
	RobustNone     = ""         // the sample-weighted mean
	RobustMedian   = "median"   // the coordinate-wise median
	RobustTrimmed  = "trimmed"  // the coordinate-wise mean without the Trim largest and smallest values
	RobustNormClip = "normclip" // the weighted mean of the vectors scaled down to the round's median norm
)

// Robust is the averaging strategies' aggregation rule. The rules other
// than the mean weigh every contributing vector alike (a bank's claimed
// weight is what an attacker would inflate), except normclip, which keeps
// the sample weights and bounds every vector's norm by the median of the
// round's norms.
type Robust struct {
	Rule string `json:",omitempty"`
	// Trim is how many of the largest and of the smallest values of each
	// coordinate the trimmed mean drops; a round with 2·Trim vectors or
	// fewer falls back to the median.
	Trim int `json:",omitempty"`
}

func (r Robust) validate(algo string) error {
	switch r.Rule {
	case RobustNone, RobustMedian, RobustNormClip:
		if r.Trim != 0 {
			return fmt.Errorf("aggregator: config: robust: trim %d is for the trimmed mean", r.Trim)
		}
	case RobustTrimmed:
		if r.Trim < 1 {
			return fmt.Errorf("aggregator: config: robust: the trimmed mean needs trim ≥ 1, got %d", r.Trim)
		}
	default:
		return fmt.Errorf("aggregator: config: robust: unknown rule %q (want median, trimmed or normclip)", r.Rule)
	}
	if r.Rule != RobustNone {
		if _, ok := newStrategyNoRobust(algo).(*meanStrategy); !ok {
			return fmt.Errorf("aggregator: config: robust aggregation is for the averaging algorithms, not %s", algo)
		}
	}
	return nil
}

// newStrategyNoRobust tells whether algo averages (meanStrategy).
func newStrategyNoRobust(algo string) Strategy {
	s, _ := newStrategy(Config{Algo: algo})
	return s
}

// aggregate is the rule's result over the contributions' vectors (vec) of
// n values, with the total sample weight; nil, 0 when none contributes.
// aside is, per contributing client, how much of its vector the rule left
// out (RoundClosed.SetAside); nil under the mean, and clients with nothing
// set aside are left out.
func (r Robust) aggregate(cs []Contribution, n int, vec func(Contribution) []float32) (out []float32, total float64, aside map[string]int) {
	if r.Rule == RobustNone {
		out, total = average(cs, n, vec)
		return out, total, nil
	}
	sorted := append([]Contribution(nil), cs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Client < sorted[b].Client })
	var vs [][]float32
	var ws []float64
	var ids []string
	for _, c := range sorted {
		if v := vec(c); c.Weight > 0 && len(v) == n {
			vs, ws, ids = append(vs, v), append(ws, c.Weight), append(ids, c.Client)
			total += c.Weight
		}
	}
	if len(vs) == 0 {
		return nil, 0, nil
	}
	counts := make([]int, len(vs))
	switch {
	case r.Rule == RobustNormClip:
		out = normClipped(vs, ws, n, counts)
	case r.Rule == RobustTrimmed && len(vs) > 2*r.Trim:
		out = trimmedMean(vs, n, r.Trim, counts)
	default:
		out = trimmedMean(vs, n, -1, counts)
	}
	for i, k := range counts {
		if k > 0 {
			if aside == nil {
				aside = map[string]int{}
			}
			aside[ids[i]] += k
		}
	}
	return out, total, aside
}

// trimmedMean is each coordinate's mean without its trim largest and
// smallest values, in float64; trim < 0: the median (the middle value, or
// the mean of the middle two). dropped[i] counts the coordinates of vs[i]
// the trimmed mean left out; for the median, which keeps the middle alone
// and so leaves out most of every bank's values, those where vs[i] held
// the largest or the smallest value: the ones furthest from it, where an
// outlying bank shows.
func trimmedMean(vs [][]float32, n, trim int, dropped []int) []float32 {
	out := make([]float32, n)
	k := len(vs)
	lo, hi := trim, k-trim // the kept window of the sorted column
	clo, chi := lo, hi     // the counted one
	if trim < 0 {
		lo, hi = (k-1)/2, k/2+1
		clo, chi = min(1, lo), max(k-1, hi)
	}
	// (value, vector) pairs, sorted by value then vector: the kept values
	// are summed in the order a sort of the values alone gives.
	col := make([]int, k)
	for j := range n {
		for i := range col {
			col[i] = i
		}
		slices.SortFunc(col, func(a, b int) int {
			if c := cmp.Compare(vs[a][j], vs[b][j]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		var s float64
		for _, i := range col[lo:hi] {
			s += float64(vs[i][j])
		}
		out[j] = float32(s / float64(hi-lo))
		for _, i := range col[:clo] {
			dropped[i]++
		}
		for _, i := range col[chi:] {
			dropped[i]++
		}
	}
	return out
}

// normClipped is the weighted mean of the vectors, each scaled down to the
// median of their norms when above it; clipped[i] is the percentage of
// vs[i]'s norm removed, rounded (the bank whose vector is scaled down
// most is the outlier: the largest honest norm is clipped every round
// too, a little).
func normClipped(vs [][]float32, ws []float64, n int, clipped []int) []float32 {
	norms := make([]float64, len(vs))
	for i, v := range vs {
		norms[i] = l2(v)
	}
	sortedNorms := slices.Sorted(slices.Values(norms))
	bound := sortedNorms[(len(sortedNorms)-1)/2]
	acc := make([]float64, n)
	var total float64
	for i, v := range vs {
		scale := 1.0
		if norms[i] > bound && norms[i] > 0 {
			scale = bound / norms[i]
			clipped[i] = int(math.Round(100 * (1 - scale)))
		}
		for j, x := range v {
			acc[j] += ws[i] * scale * float64(x)
		}
		total += ws[i]
	}
	out := make([]float32, n)
	for j := range acc {
		out[j] = float32(acc[j] / total)
		if math.IsNaN(float64(out[j])) {
			out[j] = 0
		}
	}
	return out
}
