package gnn

import (
	"math"
	"testing"
)

// TestGatherSlots checks GatherSlots and GatherSlotsBias (several rows at a time in assembly
// where available) against GatherSparse row by row, bit for bit, with
// repeated columns, row counts that leave remainders and widths the
// assembly does not take; and that a bad column panics.
func TestGatherSlots(t *testing.T) {
	rng := newRNG(31)
	for _, n := range []int{1, 32, 33, 64, 96} {
		for _, k := range []int{1, 2, 13} {
			for _, rows := range []int{0, 1, 3, 4, 5, 9} {
				wr := 11
				w := randTensor(rng, wr, n).Data
				cols := make([]int32, rows*k)
				for i := range cols {
					cols[i] = int32(rng.IntN(wr))
				}
				if len(cols) > 1 {
					cols[1] = cols[0]
				}
				vals := randTensor(rng, 1, rows*k).Data
				got := randTensor(rng, rows, n).Data
				GatherSlots(got, cols, vals, k, w, n)
				bias := randTensor(rng, 1, n).Data
				gotB := randTensor(rng, rows, n).Data
				GatherSlotsBias(gotB, cols, vals, k, w, n, bias)
				want := make([]float32, n)
				for i := range rows {
					GatherSparse(want, cols[i*k:(i+1)*k], vals[i*k:(i+1)*k], w, n)
					for j, v := range want {
						if math.Float32bits(v) != math.Float32bits(got[i*n+j]) {
							t.Fatalf("n=%d k=%d rows=%d: (%d,%d) = %v, want %v", n, k, rows, i, j, got[i*n+j], v)
						}
					}
					AddInto(want, bias)
					for j, v := range want {
						if math.Float32bits(v) != math.Float32bits(gotB[i*n+j]) {
							t.Fatalf("bias n=%d k=%d rows=%d: (%d,%d) = %v, want %v", n, k, rows, i, j, gotB[i*n+j], v)
						}
					}
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("column outside w did not panic")
		}
	}()
	GatherSlots(make([]float32, 4*64), []int32{0, 1, 2, 9}, make([]float32, 4), 1, make([]float32, 3*64), 64)
}
