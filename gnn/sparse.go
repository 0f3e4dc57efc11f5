package gnn

import (
	"fmt"
	"slices"
	"sync"

	"graphfed/graph"
)

// SpMM sets dst = s·b, where s is a graph.CSR of shape r×c (Val nil means
// all ones), b is c×n and dst is r×n. Rows are split across goroutines by
// stored entries, so a few hub rows do not serialise the product.
func SpMM(dst *Tensor, s *graph.CSR, b *Tensor) {
	n := b.Cols
	if b.Rows != s.Cols || dst.Rows != s.Rows || dst.Cols != n {
		ShapePanic("spmm", "%dx%d (sparse) · %dx%d into %dx%d", s.Rows, s.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	if p := ParallelWorkers(s.Rows, s.NNZ()*n); p > 1 {
		splitNNZ(s.RowPtr, p, func(lo, hi int) { spmmRows(dst, s, b, lo, hi) })
		return
	}
	spmmRows(dst, s, b, 0, s.Rows)
}

// spmmRows computes rows [lo, hi) of dst = s·b.
func spmmRows(dst *Tensor, s *graph.CSR, b *Tensor, lo, hi int) {
	n := b.Cols
	for i := lo; i < hi; i++ {
		k0, k1 := s.RowPtr[i], s.RowPtr[i+1]
		if s.Val == nil {
			d := dst.Data[i*n : (i+1)*n]
			clear(d)
			for _, c := range s.ColIdx[k0:k1] {
				AddInto(d, b.Data[int(c)*n:int(c)*n+n])
			}
			continue
		}
		GatherSparse(dst.Data[i*n:(i+1)*n], s.ColIdx[k0:k1], s.Val[k0:k1], b.Data, n)
	}
}

// SpMMT sets dst = sᵀ·b, where s is r×c (Val nil means all ones), b is r×n
// and dst is c×n. It scatters row i of b into the rows of dst that row i of
// s names, skipping rows of b that are entirely zero (gradients often have
// many). Large products scatter a fixed number of row ranges (chosen by
// size, not by CPU count) into separate buffers on separate goroutines and
// sum those in order, so results do not depend on the machine.
func SpMMT(dst *Tensor, s *graph.CSR, b *Tensor) {
	var ws []float32
	spmmT(dst, s, b, &ws)
}

// spmmT is SpMMT with a caller-kept workspace, grown as needed.
func spmmT(dst *Tensor, s *graph.CSR, b *Tensor, ws *[]float32) {
	n := b.Cols
	if b.Rows != s.Rows || dst.Rows != s.Cols || dst.Cols != n {
		ShapePanic("spmmt", "(%dx%d sparse)ᵀ · %dx%d into %dx%d", s.Rows, s.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	nnz := s.NNZ()
	chunks := 1
	switch work := nnz * n; {
	case work >= 16*minParallelWork:
		chunks = 4
	case work >= 2*minParallelWork:
		chunks = 2
	}
	chunks = max(1, min(chunks, s.Rows))
	size := len(dst.Data)
	partial := Grow(ws, (chunks-1)*size)
	if chunks == 1 {
		spmmTRows(dst.Data, s, b, 0, s.Rows)
		return
	}
	bound := func(c int) int {
		if c == chunks {
			return s.Rows
		}
		return rowAtEntry(s.RowPtr, c*nnz/chunks)
	}
	var wg sync.WaitGroup
	for c := 1; c < chunks; c++ {
		out := partial[(c-1)*size : c*size]
		lo, hi := bound(c), bound(c+1)
		wg.Go(func() { spmmTRows(out, s, b, lo, hi) })
	}
	spmmTRows(dst.Data, s, b, 0, bound(1))
	wg.Wait()
	for c := 1; c < chunks; c++ {
		AddInto(dst.Data, partial[(c-1)*size:c*size])
	}
}

// spmmTRows sets out = s[lo:hi]ᵀ·b[lo:hi], scattering the non-zero rows
// of b in [lo, hi).
func spmmTRows(out []float32, s *graph.CSR, b *Tensor, lo, hi int) {
	n := b.Cols
	clear(out)
	for i := lo; i < hi; i++ {
		brow := b.Data[i*n : (i+1)*n]
		if allZero(brow) {
			continue
		}
		k0, k1 := s.RowPtr[i], s.RowPtr[i+1]
		if s.Val == nil {
			for _, c := range s.ColIdx[k0:k1] {
				AddInto(out[int(c)*n:int(c)*n+n], brow)
			}
			continue
		}
		ScatterSparse(out, s.ColIdx[k0:k1], s.Val[k0:k1], brow, n)
	}
}

// Sparse is a sparse matrix prepared for repeated products: M always has
// Val, and T, when built, is Mᵀ so that Mᵀ·B is a row-parallel gather too.
// For a symmetric matrix T is M itself.
type Sparse struct {
	M *graph.CSR // Rows×Cols
	T *graph.CSR // Cols×Rows, Mᵀ; nil when not built (MulT then scatters)
}

// NewSparse validates m and builds its transpose. m is not modified; when
// m.Val is nil the result stores explicit ones.
func NewSparse(m *graph.CSR) (*Sparse, error) {
	s, err := newSparseNoT(m)
	if err != nil {
		return nil, err
	}
	t := transpose(s.M)
	if m.Rows == m.Cols && slices.Equal(t.RowPtr, s.M.RowPtr) && slices.Equal(t.ColIdx, s.M.ColIdx) && slices.Equal(t.Val, s.M.Val) {
		t = s.M
	}
	s.T = t
	return s, nil
}

// newSparseNoT is NewSparse without the transpose, for matrices whose
// transposed products always scatter through SpMMT (input features: their
// weight gradients skip the many zero rows of the layer gradient).
func newSparseNoT(m *graph.CSR) (*Sparse, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("gnn: new sparse: %w", err)
	}
	if m.Val == nil {
		ones := make([]float32, m.NNZ())
		for i := range ones {
			ones[i] = 1
		}
		m = &graph.CSR{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx, Val: ones}
	}
	return &Sparse{M: m}, nil
}

// Rows is the row count of M.
func (s *Sparse) Rows() int { return s.M.Rows }

// Cols is the column count of M.
func (s *Sparse) Cols() int { return s.M.Cols }

// Symmetric reports whether M is known to equal its transpose.
func (s *Sparse) Symmetric() bool { return s.T == s.M }

// Mul sets dst = M·b: b is Cols×n, dst is Rows×n.
func (s *Sparse) Mul(dst, b *Tensor) { SpMM(dst, s.M, b) }

// MulT sets dst = Mᵀ·b: b is Rows×n, dst is Cols×n. It gathers through T
// when b is mostly non-zero and scatters through M (SpMMT, skipping zero
// rows) when T is missing or most rows of b are zero, as back-propagated
// gradients of a loss on a few labelled nodes are.
func (s *Sparse) MulT(dst, b *Tensor) {
	var ws []float32
	s.mulT(dst, b, &ws)
}

// mulT is MulT with a caller-kept scatter workspace.
func (s *Sparse) mulT(dst, b *Tensor, ws *[]float32) {
	if s.T == nil || mostlyZeroRows(b) {
		spmmT(dst, s.M, b, ws)
		return
	}
	SpMM(dst, s.T, b)
}

// mostlyZeroRows reports whether more than half of b's rows are zero.
func mostlyZeroRows(b *Tensor) bool {
	nonzero, limit := 0, b.Rows/2
	for i := 0; i < b.Rows; i++ {
		if !allZero(b.Data[i*b.Cols : (i+1)*b.Cols]) {
			nonzero++
			if nonzero >= limit {
				return false
			}
		}
	}
	return true
}

// transpose returns mᵀ, with sorted columns since rows are visited in
// order.
func transpose(m *graph.CSR) *graph.CSR {
	nnz := m.NNZ()
	rowPtr := make([]int, m.Cols+1)
	for _, c := range m.ColIdx {
		rowPtr[c+1]++
	}
	for j := 1; j <= m.Cols; j++ {
		rowPtr[j] += rowPtr[j-1]
	}
	fill := slices.Clone(rowPtr[:m.Cols])
	col := make([]int32, nnz)
	var val []float32
	if m.Val != nil {
		val = make([]float32, nnz)
	}
	for i := 0; i < m.Rows; i++ {
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			c := m.ColIdx[k]
			at := fill[c]
			fill[c]++
			col[at] = int32(i)
			if val != nil {
				val[at] = m.Val[k]
			}
		}
	}
	return &graph.CSR{Rows: m.Cols, Cols: m.Rows, RowPtr: rowPtr, ColIdx: col, Val: val}
}

// rowAtEntry returns the first row whose entries start at or after e.
func rowAtEntry(rowPtr []int, e int) int {
	r, _ := slices.BinarySearch(rowPtr[:len(rowPtr)-1], e)
	return r
}

// AddInto sets y += x; len(x) must be at least len(y).
func AddInto(y, x []float32) {
	x = x[:len(y)]
	for i := addWide(y, y, x); i < len(y); i++ {
		y[i] += x[i]
	}
}
