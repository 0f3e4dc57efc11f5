// Package graph holds graphfed's graph types (CSR adjacency, sparse feature
// matrices, node-classification datasets), their loaders, generators,
// partitioners and metrics. The AML transaction multigraph and its
// AMLworld loaders are package aml/amlworld.
//
// Node ids are int32 throughout: the largest graphs graphfed handles (AMLworld
// medium, Gowalla) have well under 2^31 nodes, and halving index memory
// matters for the sparse kernels, which are memory-bound.
package graph

import (
	"fmt"
	"sort"
)

// CSR is a sparse matrix in compressed sparse row form with Rows×Cols shape.
// As an adjacency matrix it is Rows×Rows and an undirected graph stores both
// directions of every edge. Column indices within a row are sorted and
// unique. Val is nil for an unweighted (all-ones) matrix.
type CSR struct {
	Rows, Cols int
	RowPtr     []int     // len Rows+1
	ColIdx     []int32   // len NNZ
	Val        []float32 // len NNZ, or nil meaning every stored value is 1
}

// NNZ is the number of stored entries.
func (m *CSR) NNZ() int { return len(m.ColIdx) }

// Row returns the column indices and values (nil when unweighted) of row i.
// The slices alias the matrix.
func (m *CSR) Row(i int) ([]int32, []float32) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	if m.Val == nil {
		return m.ColIdx[lo:hi], nil
	}
	return m.ColIdx[lo:hi], m.Val[lo:hi]
}

// Degree is the number of stored entries in row i.
func (m *CSR) Degree(i int) int { return m.RowPtr[i+1] - m.RowPtr[i] }

// Validate checks the structural invariants; loaders and decoders call it so
// that a malformed matrix is an error, never an index panic later.
func (m *CSR) Validate() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("graph: csr: negative shape %dx%d", m.Rows, m.Cols)
	}
	if len(m.RowPtr) != m.Rows+1 {
		return fmt.Errorf("graph: csr: rowptr has %d entries, want %d", len(m.RowPtr), m.Rows+1)
	}
	if m.RowPtr[0] != 0 || m.RowPtr[m.Rows] != len(m.ColIdx) {
		return fmt.Errorf("graph: csr: rowptr ends %d..%d, want 0..%d", m.RowPtr[0], m.RowPtr[m.Rows], len(m.ColIdx))
	}
	if m.Val != nil && len(m.Val) != len(m.ColIdx) {
		return fmt.Errorf("graph: csr: %d values for %d entries", len(m.Val), len(m.ColIdx))
	}
	for i := 0; i < m.Rows; i++ {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		if hi < lo {
			return fmt.Errorf("graph: csr: row %d has negative length", i)
		}
		for k := lo; k < hi; k++ {
			c := m.ColIdx[k]
			if c < 0 || int(c) >= m.Cols {
				return fmt.Errorf("graph: csr: row %d column %d out of range [0,%d)", i, c, m.Cols)
			}
			if k > lo && m.ColIdx[k-1] >= c {
				return fmt.Errorf("graph: csr: row %d columns not strictly increasing", i)
			}
		}
	}
	return nil
}

// Edge is a directed pair of node ids.
type Edge struct{ U, V int32 }

// FromEdges builds an n×n unweighted adjacency from edges. With symmetric set
// every edge is stored in both directions. Self loops and duplicates are
// dropped; ids outside [0,n) are an error.
func FromEdges(n int, edges []Edge, symmetric bool) (*CSR, error) {
	deg := make([]int, n+1)
	for _, e := range edges {
		if e.U < 0 || int(e.U) >= n || e.V < 0 || int(e.V) >= n {
			return nil, fmt.Errorf("graph: from edges: edge (%d,%d) outside [0,%d)", e.U, e.V, n)
		}
		if e.U == e.V {
			continue
		}
		deg[e.U+1]++
		if symmetric {
			deg[e.V+1]++
		}
	}
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	col := make([]int32, deg[n])
	fill := append([]int(nil), deg[:n]...)
	for _, e := range edges {
		if e.U == e.V {
			continue
		}
		col[fill[e.U]] = e.V
		fill[e.U]++
		if symmetric {
			col[fill[e.V]] = e.U
			fill[e.V]++
		}
	}
	// Sort and deduplicate each row in place, compacting as we go.
	out := 0
	rowPtr := make([]int, n+1)
	for i := 0; i < n; i++ {
		row := col[deg[i]:deg[i+1]]
		sort.Slice(row, func(a, b int) bool { return row[a] < row[b] })
		start := out
		for k, c := range row {
			if k > 0 && row[k-1] == c {
				continue
			}
			col[out] = c
			out++
		}
		rowPtr[i] = start
		rowPtr[i+1] = out
	}
	return &CSR{Rows: n, Cols: n, RowPtr: rowPtr, ColIdx: col[:out:out]}, nil
}

// Edges lists the stored entries as directed edges, row by row.
func (m *CSR) Edges() []Edge {
	out := make([]Edge, 0, m.NNZ())
	for i := 0; i < m.Rows; i++ {
		cols, _ := m.Row(i)
		for _, c := range cols {
			out = append(out, Edge{int32(i), c})
		}
	}
	return out
}
