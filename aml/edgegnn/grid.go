package edgegnn

import (
	"fmt"
	"slices"

	"graphfed/gnn"
)

// A federated job cannot choose its operating point the way a central
// one does, on the validation scores themselves: each bank holds a few
// dozen validation positives, so a threshold tuned on one bank's scores is
// noisy, and the scores may not leave the bank. Confusion counts at a
// fixed grid of thresholds can: they are aggregates like the arg-max
// counts already reported, they pool across banks by addition, and the
// threshold that maximizes the pooled validation F1 is then read off the
// grid, the test counts at that threshold giving a test F1 chosen on
// validation data only.

// DecisionGrid is the fixed grid of margin thresholds at which GridCounts
// counts: −8 to +8 in steps of 1/4 around the arg-max decision 0. Eight
// units of log-odds either way covers the operating points of any
// class-weighting a user would pick (a weight of 10 moves the decision by
// log 10 ≈ 2.3); a quarter unit is finer than the precision of a threshold
// chosen on a few hundred positives.
func DecisionGrid() []float32 {
	g := make([]float32, 0, 65)
	for i := -32; i <= 32; i++ {
		g = append(g, float32(i)/4)
	}
	return g
}

// GridCounts returns, for each threshold of grid (ascending), the
// confusion counts of predicting margin > threshold against labels (0 or
// 1): the same as CountAt at every grid point, in O(n log n + len(grid)).
func GridCounts(margins []float32, labels []int32, grid []float32) ([]Scores, error) {
	if len(margins) != len(labels) {
		return nil, fmt.Errorf("gnn: grid counts: %d margins for %d labels", len(margins), len(labels))
	}
	if !slices.IsSorted(grid) {
		return nil, fmt.Errorf("gnn: grid counts: thresholds not ascending")
	}
	var pos, neg []float32
	for i, m := range margins {
		if labels[i] == 1 {
			pos = append(pos, m)
		} else {
			neg = append(neg, m)
		}
	}
	slices.Sort(pos)
	slices.Sort(neg)
	out := make([]Scores, len(grid))
	for j, thr := range grid {
		var t edgeTally
		t.fn = countAtMost(pos, thr)
		t.tp = len(pos) - t.fn
		t.tn = countAtMost(neg, thr)
		t.fp = len(neg) - t.tn
		out[j] = t.scores()
	}
	return out, nil
}

// countAtMost is the number of values of sorted s that are ≤ x.
func countAtMost(s []float32, x float32) int {
	i, _ := slices.BinarySearchFunc(s, x, func(v, x float32) int {
		if v <= x {
			return -1
		}
		return 1
	})
	return i
}

// PooledThreshold returns the index into a grid of the threshold whose
// pooled counts (tp, fp, fn per grid point, summed over parties and
// possibly weighted, hence float) maximize F1, and that F1. Ties keep the
// threshold closest to the arg-max decision, as BestThreshold does;
// without positives that is the grid point nearest 0, with F1 0.
func PooledThreshold(grid []float32, tp, fp, fn []float64) (int, float64, error) {
	n := len(grid)
	if n == 0 || len(tp) != n || len(fp) != n || len(fn) != n {
		return 0, 0, fmt.Errorf("gnn: pooled threshold: %d thresholds with %d, %d and %d counts", n, len(tp), len(fp), len(fn))
	}
	best, bestF1 := 0, -1.0
	for j := range grid {
		f1 := gnn.F1(tp[j], fp[j], fn[j])
		if f1 > bestF1 || f1 == bestF1 && abs32(grid[j]) < abs32(grid[best]) {
			best, bestF1 = j, f1
		}
	}
	return best, bestF1, nil
}
