package aggregator

import (
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
		if _, ok := newStrategyNoRobust(algo).(meanStrategy); !ok {
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
func (r Robust) aggregate(cs []Contribution, n int, vec func(Contribution) []float32) ([]float32, float64) {
	if r.Rule == RobustNone {
		return average(cs, n, vec)
	}
	sorted := append([]Contribution(nil), cs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Client < sorted[b].Client })
	var vs [][]float32
	var ws []float64
	var total float64
	for _, c := range sorted {
		if v := vec(c); c.Weight > 0 && len(v) == n {
			vs, ws = append(vs, v), append(ws, c.Weight)
			total += c.Weight
		}
	}
	if len(vs) == 0 {
		return nil, 0
	}
	switch r.Rule {
	case RobustNormClip:
		return normClipped(vs, ws, n), total
	case RobustTrimmed:
		if len(vs) > 2*r.Trim {
			return trimmedMean(vs, n, r.Trim), total
		}
	}
	return trimmedMean(vs, n, -1), total
}

// trimmedMean is each coordinate's mean without its trim largest and
// smallest values, in float64; trim < 0: the median.
func trimmedMean(vs [][]float32, n, trim int) []float32 {
	out := make([]float32, n)
	col := make([]float64, len(vs))
	for j := range n {
		for i, v := range vs {
			col[i] = float64(v[j])
		}
		slices.Sort(col)
		if trim < 0 {
			k := len(col)
			if k%2 == 1 {
				out[j] = float32(col[k/2])
			} else {
				out[j] = float32((col[k/2-1] + col[k/2]) / 2)
			}
			continue
		}
		var s float64
		for _, x := range col[trim : len(col)-trim] {
			s += x
		}
		out[j] = float32(s / float64(len(col)-2*trim))
	}
	return out
}

// normClipped is the weighted mean of the vectors, each scaled down to the
// median of their norms when above it.
func normClipped(vs [][]float32, ws []float64, n int) []float32 {
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
