package spectral

import "graphfed/graph"

// Operator is a symmetric linear operator on R^n applied to blocks of
// vectors. Implementations in this package keep scratch buffers, so one
// value must not be used by several goroutines at once.
type Operator interface {
	// Dim is n.
	Dim() int
	// MulBlock sets dst = A·src for k vectors; src and dst are n×k
	// row-major (node-major) and must not overlap.
	MulBlock(dst, src []float64, k int)
}

// gatherCSR is the sparse kernel behind every operator here: for each row
// i of m, y[i,:] = scale[i]·Σ_p val[p]·x[col[p],:] with x and y node-major
// with k columns. Rows are split between goroutines by stored entries;
// each row is summed by one goroutine in storage order.
func gatherCSR(m *graph.CSR, x []float64, k int, y []float64, scale []float64) {
	rows := m.Rows
	if len(y) < rows*k || len(x) < m.Cols*k || len(scale) < rows {
		panic("spectral: gather: shape")
	}
	workers := workersFor(rows, m.NNZ()*k)
	pieces := workers
	if workers > 1 {
		pieces = workers * piecesPerWorker
	}
	forPieces(pieces, workers, nnzBound(m.RowPtr, pieces), func(_, lo, hi int) {
		switch {
		case k == 1:
			gatherRows1(m, x, y, scale, lo, hi)
		case k == 4 && m.Val == nil:
			gatherRows4(m, x, y, scale, lo, hi)
		default:
			gatherRows(m, x, k, y, scale, lo, hi)
		}
	})
}

func gatherRows1(m *graph.CSR, x, y, scale []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		p0, p1 := m.RowPtr[i], m.RowPtr[i+1]
		cols := m.ColIdx[p0:p1]
		var s0, s1 float64
		if m.Val == nil {
			t := 0
			for ; t+1 < len(cols); t += 2 {
				s0 += x[cols[t]]
				s1 += x[cols[t+1]]
			}
			if t < len(cols) {
				s0 += x[cols[t]]
			}
		} else {
			vals := m.Val[p0:p1]
			vals = vals[:len(cols)]
			for t, c := range cols {
				s0 += float64(vals[t]) * x[c]
			}
		}
		y[i] = scale[i] * (s0 + s1)
	}
}

// gatherRows4 is gatherRows for 4 columns of an unweighted matrix, the
// Lanczos block size by default: the sums stay in registers instead of
// being loaded and stored for every entry.
func gatherRows4(m *graph.CSR, x, y, scale []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		var a0, a1, a2, a3 float64
		for _, c := range m.ColIdx[m.RowPtr[i]:m.RowPtr[i+1]] {
			xr := x[int(c)*4 : int(c)*4+4]
			a0 += xr[0]
			a1 += xr[1]
			a2 += xr[2]
			a3 += xr[3]
		}
		s := scale[i]
		yr := y[i*4 : i*4+4]
		yr[0], yr[1], yr[2], yr[3] = s*a0, s*a1, s*a2, s*a3
	}
}

func gatherRows(m *graph.CSR, x []float64, k int, y []float64, scale []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		p0, p1 := m.RowPtr[i], m.RowPtr[i+1]
		cols := m.ColIdx[p0:p1]
		acc := y[i*k : (i+1)*k]
		clear(acc)
		if m.Val == nil {
			for _, c := range cols {
				xr := x[int(c)*k : int(c)*k+k]
				xr = xr[:len(acc)]
				for q := range acc {
					acc[q] += xr[q]
				}
			}
		} else {
			vals := m.Val[p0:p1]
			vals = vals[:len(cols)]
			for t, c := range cols {
				a := float64(vals[t])
				xr := x[int(c)*k : int(c)*k+k]
				xr = xr[:len(acc)]
				for q := range acc {
					acc[q] += a * xr[q]
				}
			}
		}
		s := scale[i]
		for q := range acc {
			acc[q] *= s
		}
	}
}

// scaleRows sets dst[i,:] = s[i]·src[i,:] for a node-major block with k
// columns.
func scaleRows(dst, src []float64, s []float64, k int) {
	for i, si := range s {
		d, x := dst[i*k:(i+1)*k], src[i*k:(i+1)*k]
		for q := range d {
			d[q] = si * x[q]
		}
	}
}

// grow returns buf with length at least n, reallocating if needed.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// normAdjOp is S = D^-1/2·A·D^-1/2 = I − L for a symmetric adjacency.
type normAdjOp struct {
	adj     *graph.CSR
	invSqrt []float64 // D^-1/2, 0 for isolated nodes
	z       []float64 // scratch: D^-1/2·src
}

func (o *normAdjOp) Dim() int { return o.adj.Rows }

func (o *normAdjOp) MulBlock(dst, src []float64, k int) {
	n := o.adj.Rows
	o.z = grow(o.z, n*k)
	scaleRows(o.z, src[:n*k], o.invSqrt, k)
	gatherCSR(o.adj, o.z, k, dst, o.invSqrt)
}

// foldOp is M = B·Bᵀ for the normalized biadjacency B = Da^-1/2·R·Db^-1/2
// of a bipartite graph with sides a (rows of R) and b (columns). The
// normalized adjacency of the bipartite graph is S = [0 B; Bᵀ 0], whose
// eigenvalues are ±σ for the singular values σ of B, so the largest
// eigenvalues of S are the square roots of those of M. Working on M halves
// the vector length and folds S's symmetric spectrum onto [0,1], which
// separates the wanted end much better: Gowalla's 128 lowest pairs take
// about a fifth of the time they take on S (see solveFolded).
type foldOp struct {
	r, rt    *graph.CSR // a×b and its transpose b×a
	invSqrtA []float64  // Da^-1/2
	invSqrtB []float64  // Db^-1/2
	invB     []float64  // Db^-1
	z, t     []float64  // scratch
}

func (o *foldOp) Dim() int { return o.r.Rows }

func (o *foldOp) MulBlock(dst, src []float64, k int) {
	a, b := o.r.Rows, o.r.Cols
	o.z = grow(o.z, a*k)
	o.t = grow(o.t, b*k)
	scaleRows(o.z, src[:a*k], o.invSqrtA, k)
	gatherCSR(o.rt, o.z, k, o.t, o.invB)
	gatherCSR(o.r, o.t, k, dst, o.invSqrtA)
}

// halfApply sets dst (b×k) = Bᵀ·src for src a×k: the other half of an
// eigenvector of S from one of M.
func (o *foldOp) halfApply(dst, src []float64, k int) {
	a := o.r.Rows
	o.z = grow(o.z, a*k)
	scaleRows(o.z, src[:a*k], o.invSqrtA, k)
	gatherCSR(o.rt, o.z, k, dst, o.invSqrtB)
}
