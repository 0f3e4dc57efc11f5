package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// HoldOutValidation returns a tuning split of d: for every user, a seeded
// random fraction frac of its training items (rounded, at least one when
// the user has two or more, never all of them) moves to Test, and the rest
// stays in Train. d.Test is not read, so that hyper-parameters chosen on the
// result have never seen the test split (the LightGCN layout has no
// validation file). The result shares no memory with d.
func HoldOutValidation(d *Interactions, frac float64, seed uint64) (*Interactions, error) {
	if !(frac > 0 && frac < 1) {
		return nil, fmt.Errorf("graph: hold out validation: fraction %v not in (0, 1)", frac)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("graph: hold out validation: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7a11d))
	train := &CSR{Rows: d.Users, Cols: d.Items, RowPtr: make([]int, d.Users+1)}
	val := &CSR{Rows: d.Users, Cols: d.Items, RowPtr: make([]int, d.Users+1)}
	var items []int32
	for u := range d.Users {
		items = append(items[:0], d.TrainItems(u)...)
		k := 0
		if n := len(items); n >= 2 {
			k = min(max(int(math.Round(frac*float64(n))), 1), n-1)
		}
		// A partial Fisher–Yates shuffle puts the k held-out items first.
		for j := range k {
			r := j + rng.IntN(len(items)-j)
			items[j], items[r] = items[r], items[j]
		}
		held, kept := items[:k], items[k:]
		slices.Sort(held)
		slices.Sort(kept)
		val.ColIdx = append(val.ColIdx, held...)
		train.ColIdx = append(train.ColIdx, kept...)
		val.RowPtr[u+1], train.RowPtr[u+1] = len(val.ColIdx), len(train.ColIdx)
	}
	return &Interactions{Name: d.Name + "/validation", Users: d.Users, Items: d.Items, Train: train, Test: val}, nil
}
