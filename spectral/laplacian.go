package spectral

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"graphfed/graph"
)

// Laplacian is the normalized Laplacian L = I − D^-1/2·A·D^-1/2 of an
// undirected graph given by its symmetric adjacency A (n×n CSR, unweighted
// or with positive weights). D is the weighted degree; an isolated node
// (degree 0) has D^-1/2 = 0, hence the identity row in L and the
// eigenvalue 1. A Laplacian is immutable and safe for concurrent use.
type Laplacian struct {
	adj     *graph.CSR
	deg     []float64 // weighted degree
	invSqrt []float64 // D^-1/2, 0 where the degree is 0
}

// NewLaplacian checks that adj is a valid square symmetric adjacency with
// finite positive weights and returns its normalized Laplacian. Self
// loops are allowed (they count once in the degree). adj is kept, not
// copied, and must not be modified afterwards.
func NewLaplacian(adj *graph.CSR) (*Laplacian, error) {
	if adj == nil {
		return nil, fmt.Errorf("spectral: laplacian: nil adjacency")
	}
	if err := adj.Validate(); err != nil {
		return nil, fmt.Errorf("spectral: laplacian: %w", err)
	}
	if adj.Rows != adj.Cols {
		return nil, fmt.Errorf("spectral: laplacian: adjacency is %dx%d, want square", adj.Rows, adj.Cols)
	}
	for p, w := range adj.Val {
		// A stored zero would be an edge for the component search but not
		// for the degrees; absent entries are how a graph says "no edge".
		if !(w > 0) || math.IsInf(float64(w), 1) {
			return nil, fmt.Errorf("spectral: laplacian: stored entry %d has weight %v, want finite and positive", p, w)
		}
	}
	if err := checkSymmetric(adj); err != nil {
		return nil, fmt.Errorf("spectral: laplacian: %w", err)
	}
	n := adj.Rows
	l := &Laplacian{adj: adj, deg: make([]float64, n), invSqrt: make([]float64, n)}
	for i := 0; i < n; i++ {
		_, vals := adj.Row(i)
		d := float64(adj.Degree(i))
		if vals != nil {
			d = 0
			for _, w := range vals {
				d += float64(w)
			}
		}
		l.deg[i] = d
		if d > 0 {
			l.invSqrt[i] = 1 / math.Sqrt(d)
		}
	}
	return l, nil
}

// checkSymmetric reports the first stored entry (i, j, w) without a
// matching (j, i, w). Rows are sorted, so each lookup is a binary search.
func checkSymmetric(adj *graph.CSR) error {
	for i := 0; i < adj.Rows; i++ {
		cols, vals := adj.Row(i)
		for t, j := range cols {
			back, bvals := adj.Row(int(j))
			p, ok := slices.BinarySearch(back, int32(i))
			if !ok {
				return fmt.Errorf("entry (%d,%d) has no mirror (%d,%d): adjacency not symmetric", i, j, j, i)
			}
			if vals != nil && vals[t] != bvals[p] {
				return fmt.Errorf("weights (%d,%d)=%v and (%d,%d)=%v differ: adjacency not symmetric", i, j, vals[t], j, i, bvals[p])
			}
		}
	}
	return nil
}

// N is the number of nodes.
func (l *Laplacian) N() int { return l.adj.Rows }

// Adjacency returns the adjacency the Laplacian was built from.
func (l *Laplacian) Adjacency() *graph.CSR { return l.adj }

// NNZ is the number of stored off-diagonal entries of L, that is of
// entries of the adjacency (self loops included).
func (l *Laplacian) NNZ() int { return l.adj.NNZ() }

// Degree returns the weighted degree of node i.
func (l *Laplacian) Degree(i int) float64 { return l.deg[i] }

// NormalizedAdjacency returns S = I − L = D^-1/2·A·D^-1/2 as an Operator
// with its own scratch space.
func (l *Laplacian) NormalizedAdjacency() Operator {
	return &normAdjOp{adj: l.adj, invSqrt: l.invSqrt}
}

// Apply sets dst = L·src for k vectors stored node-major (n×k row-major).
func (l *Laplacian) Apply(dst, src []float64, k int) {
	n := l.N()
	if len(dst) < n*k || len(src) < n*k {
		panic("spectral: laplacian apply: shape")
	}
	op := &normAdjOp{adj: l.adj, invSqrt: l.invSqrt}
	op.MulBlock(dst, src, k)
	for p := 0; p < n*k; p++ {
		dst[p] = src[p] - dst[p]
	}
}

// Dense returns L as a dense n×n symmetric matrix; it is meant for small
// graphs and for checking the sparse code.
func (l *Laplacian) Dense() *mat.SymDense {
	n := l.N()
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		d.SetSym(i, i, 1)
	}
	for i := 0; i < n; i++ {
		cols, vals := l.adj.Row(i)
		for t, j := range cols {
			if int(j) < i {
				continue
			}
			w := 1.0
			if vals != nil {
				w = float64(vals[t])
			}
			d.SetSym(i, int(j), d.At(i, int(j))-l.invSqrt[i]*w*l.invSqrt[j])
		}
	}
	return d
}

// BipartiteAdjacency builds the (U+I)×(U+I) symmetric adjacency
// [0 R; Rᵀ 0] of a user–item graph from its U×I interaction matrix r:
// user u is node u and item i is node U+i. Values are copied when r is
// weighted.
func BipartiteAdjacency(r *graph.CSR) (*graph.CSR, error) {
	if r == nil {
		return nil, fmt.Errorf("spectral: bipartite adjacency: nil matrix")
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("spectral: bipartite adjacency: %w", err)
	}
	u, items := r.Rows, r.Cols
	rt := transpose(r)
	n := u + items
	rowPtr := make([]int, n+1)
	col := make([]int32, 0, 2*r.NNZ())
	var val []float32
	if r.Val != nil {
		val = make([]float32, 0, 2*r.NNZ())
	}
	for i := 0; i < u; i++ {
		cols, vals := r.Row(i)
		for _, c := range cols {
			col = append(col, int32(u)+c)
		}
		val = append(val, vals...)
		rowPtr[i+1] = len(col)
	}
	for j := 0; j < items; j++ {
		cols, vals := rt.Row(j)
		col = append(col, cols...)
		val = append(val, vals...)
		rowPtr[u+j+1] = len(col)
	}
	return &graph.CSR{Rows: n, Cols: n, RowPtr: rowPtr, ColIdx: col, Val: val}, nil
}

// NewBipartiteLaplacian is NewLaplacian(BipartiteAdjacency(r)).
func NewBipartiteLaplacian(r *graph.CSR) (*Laplacian, error) {
	adj, err := BipartiteAdjacency(r)
	if err != nil {
		return nil, err
	}
	return NewLaplacian(adj)
}

// transpose returns mᵀ; rows of the result are sorted because rows of m are
// visited in order.
func transpose(m *graph.CSR) *graph.CSR {
	rowPtr := make([]int, m.Cols+1)
	for _, c := range m.ColIdx {
		rowPtr[c+1]++
	}
	for j := 0; j < m.Cols; j++ {
		rowPtr[j+1] += rowPtr[j]
	}
	fill := slices.Clone(rowPtr[:m.Cols])
	col := make([]int32, m.NNZ())
	var val []float32
	if m.Val != nil {
		val = make([]float32, m.NNZ())
	}
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for t, c := range cols {
			col[fill[c]] = int32(i)
			if val != nil {
				val[fill[c]] = vals[t]
			}
			fill[c]++
		}
	}
	return &graph.CSR{Rows: m.Cols, Cols: m.Rows, RowPtr: rowPtr, ColIdx: col, Val: val}
}
