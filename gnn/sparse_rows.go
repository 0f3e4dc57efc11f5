package gnn

import "fmt"

// GatherSparseRows is GatherSparse for every row t of a sparse matrix
// stored by rows (ptr, cols, vals, as a CSR): for t in [lo, hi) it sets
// d[t·ld+c0 : t·ld+c0+n] = Σ_{k ∈ [ptr[t], ptr[t+1])} vals[k]·b[cols[k]·n :
// …+n], every row bit for bit what GatherSparse computes. It checks the
// block's columns against b's rows once, where a GatherSparse per row
// checked each row's and paid a call's overhead on top (message
// aggregation makes tens of thousands of these calls a step, of about ten
// terms each). It panics on a column outside b.
func GatherSparseRows(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) {
	if lo >= hi {
		return
	}
	k0, k1 := ptr[lo], ptr[hi]
	checkBlockRows("gather sparse rows", cols[k0:k1], len(b)/max(n, 1))
	vals = vals[:len(cols)]
	if gatherRowsWide(d, ld, c0, ptr, cols, vals, b, n, lo, hi) {
		return
	}
	for t := lo; t < hi; t++ {
		a, z := ptr[t], ptr[t+1]
		row := d[t*ld+c0 : t*ld+c0+n]
		gatherSparseFrom(gatherSparseWideChecked(row, cols[a:z], vals[a:z], b, n), row, cols[a:z], vals[a:z], b, n)
	}
}

// ScatterSparseRows is GatherSparseRows' transpose: for t in [lo, hi) and
// k in [ptr[t], ptr[t+1]) it adds vals[k]·g[t·ld+c0 : t·ld+c0+n] into row
// cols[k] of out (row-major, n columns), in that order, as ScatterSparse
// per row would. It panics on a column outside out.
func ScatterSparseRows(out []float32, cols []int32, vals []float32, ptr []int, g []float32, ld, c0, n, lo, hi int) {
	if lo >= hi {
		return
	}
	k0, k1 := ptr[lo], ptr[hi]
	checkBlockRows("scatter sparse rows", cols[k0:k1], len(out)/max(n, 1))
	vals = vals[:len(cols)]
	if scatterRowsWide(out, cols, vals, ptr, g, ld, c0, n, lo, hi) {
		return
	}
	for t := lo; t < hi; t++ {
		a, z := ptr[t], ptr[t+1]
		if a == z {
			continue
		}
		brow := g[t*ld+c0 : t*ld+c0+n]
		scatterSparseFrom(scatterSparseWideChecked(out, cols[a:z], vals[a:z], brow, n), out, cols[a:z], vals[a:z], brow, n)
	}
}

// checkBlockRows panics unless every column is a row below rows.
func checkBlockRows(op string, cols []int32, rows int) {
	for _, c := range cols {
		if uint(int(c)) >= uint(rows) {
			panic(fmt.Sprintf("gnn: %s: row %d outside [0,%d)", op, c, rows))
		}
	}
}

// GatherRowsNarrow is GatherSparseRows for rows of at most 16 columns
// (raw node inputs, edge input slots): on AVX-512 each output row is one
// masked register and each term one fused multiply-add, where the row
// kernels run such widths element by element in Go. Its sums agree with
// GatherSparseRows' to float32 rounding, not bit for bit (the Go loop does
// not fuse). It panics on a column outside b.
func GatherRowsNarrow(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) {
	if lo >= hi {
		return
	}
	checkBlockRows("gather rows narrow", cols[ptr[lo]:ptr[hi]], len(b)/max(n, 1))
	if gatherRowsNarrowAsm(d, ld, c0, ptr, cols, vals, b, n, lo, hi) {
		return
	}
	GatherSparseRows(d, ld, c0, ptr, cols, vals, b, n, lo, hi)
}
