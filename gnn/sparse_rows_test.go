package gnn

import (
	"math"
	"testing"
)

// TestSparseRows checks GatherSparseRows and ScatterSparseRows against
// GatherSparse and ScatterSparse row by row, bit for bit, on widths the
// assembly takes (32, 64, 96) and does not, with empty rows, repeated
// columns and a sub-range of rows written into a column block of a wider
// matrix; and that a bad column panics.
func TestSparseRows(t *testing.T) {
	rng := newRNG(61)
	for _, n := range []int{5, 32, 64, 96} {
		src := 9
		b := randTensor(rng, src, n).Data
		ptr := []int{0, 3, 3, 7, 8, 12}
		cols := make([]int32, ptr[len(ptr)-1])
		for i := range cols {
			cols[i] = int32(rng.IntN(src))
		}
		cols[1] = cols[0]
		vals := randTensor(rng, 1, len(cols)).Data
		rows, ld, c0 := len(ptr)-1, n+7, 3
		got := randTensor(rng, rows, ld).Data
		want := append([]float32(nil), got...)
		GatherSparseRows(got, ld, c0, ptr, cols, vals, b, n, 1, rows)
		for r := 1; r < rows; r++ {
			GatherSparse(want[r*ld+c0:r*ld+c0+n], cols[ptr[r]:ptr[r+1]], vals[ptr[r]:ptr[r+1]], b, n)
		}
		sameBits(t, "gather rows", n, got, want)
		g := randTensor(rng, rows, ld).Data
		outG := append([]float32(nil), b...)
		outW := append([]float32(nil), b...)
		ScatterSparseRows(outG, cols, vals, ptr, g, ld, c0, n, 0, rows)
		for r := range rows {
			ScatterSparse(outW, cols[ptr[r]:ptr[r+1]], vals[ptr[r]:ptr[r+1]], g[r*ld+c0:r*ld+c0+n], n)
		}
		sameBits(t, "scatter rows", n, outG, outW)
	}
	// A longer block as the edge layers have it (many rows, a few terms
	// each, some empty, d ending exactly at the last row's columns), and a
	// block without terms.
	for _, n := range []int{32, 64} {
		src, rows := 50, 300
		b := randTensor(rng, src, n).Data
		ptr := make([]int, rows+1)
		for r := range rows {
			ptr[r+1] = ptr[r] + rng.IntN(7)
		}
		cols := make([]int32, ptr[rows])
		for i := range cols {
			cols[i] = int32(rng.IntN(src))
		}
		vals := randTensor(rng, 1, len(cols)).Data
		ld, c0 := 4*n, n
		got := randTensor(rng, rows, ld).Data[:(rows-1)*ld+c0+n]
		want := append([]float32(nil), got...)
		GatherSparseRows(got, ld, c0, ptr, cols, vals, b, n, 0, rows)
		for r := range rows {
			GatherSparse(want[r*ld+c0:r*ld+c0+n], cols[ptr[r]:ptr[r+1]], vals[ptr[r]:ptr[r+1]], b, n)
		}
		sameBits(t, "gather rows (long)", n, got, want)
		outG := append([]float32(nil), b...)
		outW := append([]float32(nil), b...)
		ScatterSparseRows(outG, cols, vals, ptr, got, ld, c0, n, 0, rows)
		for r := range rows {
			ScatterSparse(outW, cols[ptr[r]:ptr[r+1]], vals[ptr[r]:ptr[r+1]], got[r*ld+c0:r*ld+c0+n], n)
		}
		sameBits(t, "scatter rows (long)", n, outG, outW)
		empty := randTensor(rng, 3, n).Data
		GatherSparseRows(empty, n, 0, []int{0, 0, 0, 0}, nil, nil, b, n, 0, 3)
		sameBits(t, "gather rows (no terms)", n, empty, make([]float32, 3*n))
	}
	defer func() {
		if recover() == nil {
			t.Fatal("column outside b did not panic")
		}
	}()
	GatherSparseRows(make([]float32, 64), 64, 0, []int{0, 1}, []int32{2}, []float32{1}, make([]float32, 2*64), 64, 0, 1)
}

func sameBits(t *testing.T, name string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s n=%d [%d] = %v, want %v", name, n, i, got[i], want[i])
		}
	}
}

// TestGatherRowsNarrow checks GatherRowsNarrow against GatherSparseRows
// to float32 rounding on every width 1..16 and a wider one, with empty
// rows, repeated columns, a column block of a wider d whose other columns
// stay as they were, and b's last row read (a masked load must not read
// past it); and that a bad column panics.
func TestGatherRowsNarrow(t *testing.T) {
	rng := newRNG(62)
	for n := 1; n <= 17; n++ {
		src, rows := 11, 40
		b := randTensor(rng, src, n).Data
		ptr := make([]int, rows+1)
		for r := range rows {
			ptr[r+1] = ptr[r] + rng.IntN(6)
		}
		cols := make([]int32, ptr[rows])
		for i := range cols {
			cols[i] = int32(rng.IntN(src))
		}
		cols[0], cols[1] = int32(src-1), int32(src-1)
		vals := randTensor(rng, 1, len(cols)).Data
		ld, c0 := n+5, 2
		got := randTensor(rng, rows, ld).Data
		want := append([]float32(nil), got...)
		GatherRowsNarrow(got, ld, c0, ptr, cols, vals, b, n, 0, rows)
		GatherSparseRows(want, ld, c0, ptr, cols, vals, b, n, 0, rows)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("n=%d: element %d (row %d, column %d): %v, want %v", n, i, i/ld, i%ld, got[i], want[i])
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a column outside b did not panic")
		}
	}()
	GatherRowsNarrow(make([]float32, 4), 4, 0, []int{0, 1}, []int32{3}, []float32{1}, make([]float32, 12), 4, 0, 1)
}
