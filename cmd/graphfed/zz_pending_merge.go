package main

// Shims for files other engineers are rewriting on their branches; this
// file goes when their branches land.

import (
	"math"
	"sort"

	"graphfed/aml/eval"
)

func meanScore(scores map[string]map[string]float64, key string) (float64, int) {
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var sum float64
	n := 0
	for _, id := range ids {
		if v, ok := scores[id][key]; ok && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

var _ = eval.PooledF1
