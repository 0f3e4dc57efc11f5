package gnn

import "math"

// Dense matrix products. Each output row is computed by the register-
// blocked kernels of kernel.go, rows and values that are zero (ReLU,
// dropout and sparse losses leave many) are skipped without per-element
// branches, and large products are split across goroutines by output rows.

// MatMul sets dst = a·b, where a is m×k, b is k×n and dst is m×n.
func MatMul(dst, a, b *Tensor) {
	m, k, n := a.Rows, a.Cols, b.Cols
	if b.Rows != k || dst.Rows != m || dst.Cols != n {
		ShapePanic("matmul", "%dx%d · %dx%d into %dx%d", a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	if p := ParallelWorkers(m, m*k*n); p > 1 {
		ParallelSplit(m, p, func(lo, hi int) { matMulRows(dst, a, b, lo, hi) })
		return
	}
	matMulRows(dst, a, b, 0, m)
}

// matMulRows computes rows [lo, hi) of dst = a·b.
func matMulRows(dst, a, b *Tensor, lo, hi int) {
	k, n := a.Cols, b.Cols
	if n%32 == 0 {
		r, _ := gemmTiles(dst.Data[lo*n:], n, a.Data[lo*k:], k, 1, b.Data, n, hi-lo, k, n, false, nil)
		lo += r
	}
	// With the FMA kernels a dense row of up to 64 values costs about what
	// compacting it did (measured: the edge model's steps ran a few
	// percent faster without compaction), so only the Go loops compact.
	if k > MaxCompact || (haveFMA && n >= 32) {
		for i := lo; i < hi; i++ {
			gatherDense(dst.Data[i*n:(i+1)*n], a.Data[i*k:(i+1)*k], b.Data, n)
		}
		return
	}
	// Narrow rows (hidden activations after ReLU and dropout, mostly
	// zero) are first compacted to their non-zeros, branch-free, and then
	// gathered like a sparse row.
	var idx [MaxCompact]int32
	var val [MaxCompact]float32
	for i := lo; i < hi; i++ {
		c := 0
		for p, v := range a.Data[i*k : (i+1)*k] {
			idx[c], val[c] = int32(p), v
			c += NonZero(v)
		}
		GatherSparse(dst.Data[i*n:(i+1)*n], idx[:c], val[:c], b.Data, n)
	}
}

// MaxCompact is the widest row MatMul compacts before multiplying.
const MaxCompact = 64

// NonZero is 1 when v is not ±0 and 0 otherwise, without a branch.
func NonZero(v float32) int {
	u := math.Float32bits(v) << 1
	return int((u | -u) >> 31)
}

// MatMulTN sets dst = aᵀ·b, where a is m×k, b is m×n and dst is k×n. This is
// the weight gradient Hᵀ·dZ of a dense layer.
func MatMulTN(dst, a, b *Tensor) {
	m, k, n := a.Rows, a.Cols, b.Cols
	if b.Rows != m || dst.Rows != k || dst.Cols != n {
		ShapePanic("matmul tn", "(%dx%d)ᵀ · %dx%d into %dx%d", a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	if p := ParallelWorkers(k, m*k*n); p > 1 {
		ParallelSplit(k, p, func(lo, hi int) { matMulTNRows(dst, a, b, lo, hi) })
		return
	}
	matMulTNRows(dst, a, b, 0, k)
}

// matMulTNRows computes rows [lo, hi) of dst = aᵀ·b. It streams over all
// of a and b, adding one rank-one update per non-zero row of b (two at a
// time); the sum over rows of b runs in the same order whatever the split.
func matMulTNRows(dst, a, b *Tensor, lo, hi int) {
	m, k, n := a.Rows, a.Cols, b.Cols
	if n%32 == 0 && m > 0 {
		r, w := gemmTiles(dst.Data[lo*n:], n, a.Data[lo:], 1, k, b.Data, n, hi-lo, m, n, false, nil)
		if r > 0 && r < hi-lo && w == n {
			// The tiles take rows four at a time. The last one to three
			// rows (a 5-column input's gradient has one) would each cost
			// a pass over all of b below (measured: 7% of the h32 edge
			// training step, for one row of the node encoder's gradient);
			// instead the tiles run again on the last four rows,
			// recomputing up to three of them with the same values.
			gemmTiles(dst.Data[(hi-4)*n:], n, a.Data[hi-4:], 1, k, b.Data, n, 4, m, n, false, nil)
			r = hi - lo
		}
		lo += r
	}
	if lo == hi {
		// The tiles took every row: the rank-one pass below would still
		// read every row of b to skip it (measured: half of MatMulTN's
		// time on a 64-column weight gradient).
		return
	}
	out := dst.Data[lo*n : hi*n]
	clear(out)
	// Non-zero rows of b go in pairs through scatterDense2, which passes
	// over out once for both, in the same order as one at a time.
	prev := -1
	for i := 0; i < m; i++ {
		brow := b.Data[i*n : (i+1)*n]
		if allZero(brow) {
			continue
		}
		if prev < 0 {
			prev = i
			continue
		}
		scatterDense2(out, a.Data[prev*k+lo:prev*k+hi], a.Data[i*k+lo:i*k+hi], b.Data[prev*n:(prev+1)*n], brow, n)
		prev = -1
	}
	if prev >= 0 {
		scatterDense(out, a.Data[prev*k+lo:prev*k+hi], b.Data[prev*n:(prev+1)*n], n)
	}
}

// MatMulNT sets dst = a·bᵀ, where a is m×k, b is n×k and dst is m×n. This is
// the input gradient dZ·Wᵀ of a dense layer.
func MatMulNT(dst, a, b *Tensor) {
	var ws []float32
	MatMulNTWork(dst, a, b, &ws)
}

// MatMulNTWork is MatMulNT with a caller-kept workspace for bᵀ.
func MatMulNTWork(dst, a, b *Tensor, ws *[]float32) {
	m, k, n := a.Rows, a.Cols, b.Rows
	if b.Cols != k || dst.Rows != m || dst.Cols != n {
		ShapePanic("matmul nt", "%dx%d · (%dx%d)ᵀ into %dx%d", a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	// Pack bᵀ (k×n) so that each output row is a gather, as in MatMul.
	bt := Grow(ws, k*n)
	for j := 0; j < n; j++ {
		for p, v := range b.Data[j*k : (j+1)*k] {
			bt[p*n+j] = v
		}
	}
	if p := ParallelWorkers(m, m*k*n); p > 1 {
		ParallelSplit(m, p, func(lo, hi int) { matMulNTRows(dst, a, bt, lo, hi) })
		return
	}
	matMulNTRows(dst, a, bt, 0, m)
}

// matMulNTRows computes rows [lo, hi) of dst = a·bt, skipping zero rows
// of a.
func matMulNTRows(dst, a *Tensor, bt []float32, lo, hi int) {
	k, n := a.Cols, dst.Cols
	if n%32 == 0 {
		r, _ := gemmTiles(dst.Data[lo*n:], n, a.Data[lo*k:], k, 1, bt, n, hi-lo, k, n, false, nil)
		lo += r
	}
	for i := lo; i < hi; i++ {
		arow := a.Data[i*k : (i+1)*k]
		d := dst.Data[i*n : (i+1)*n]
		if allZero(arow) {
			clear(d)
			continue
		}
		gatherDense(d, arow, bt, n)
	}
}

// Grow returns (*ws)[:n], reallocating *ws when it is too short.
func Grow(ws *[]float32, n int) []float32 {
	if cap(*ws) < n {
		*ws = make([]float32, n)
	}
	return (*ws)[:n]
}

// allZero reports whether every element of x is ±0. It ORs the bit
// patterns without the sign bit instead of branching per element.
func allZero(x []float32) bool {
	var acc uint32
	for len(x) >= 8 {
		b := (*[8]float32)(x)
		acc |= math.Float32bits(b[0]) | math.Float32bits(b[1]) | math.Float32bits(b[2]) | math.Float32bits(b[3]) |
			math.Float32bits(b[4]) | math.Float32bits(b[5]) | math.Float32bits(b[6]) | math.Float32bits(b[7])
		x = x[8:]
	}
	for _, v := range x {
		acc |= math.Float32bits(v)
	}
	return acc<<1 == 0
}
