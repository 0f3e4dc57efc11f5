package gnn

import (
	"fmt"
	"math"

	"graphfed/graph"
)

// Model kinds, as ModelConfig.Kind and NewInput spell them.
const (
	KindGCN  = "gcn"
	KindSAGE = "sage"
)

// Input is one graph prepared for a model kind: the sparse node features
// and the propagation matrix the layers multiply by, both built once per
// graph and reused by every epoch.
type Input struct {
	Kind string
	X    *Sparse // N×F node features (no transpose: see Features.mulT)
	// Prop is N×N: Â = D^-1/2 (A+I) D^-1/2 for "gcn", the row-mean
	// operator D⁻¹A for "sage" (an isolated node's row is empty).
	Prop *Sparse
}

// NewInput prepares adj (N×N adjacency: symmetric, no self loops, Val nil
// meaning unweighted) and features (N×F, Val nil meaning binary) for the
// model kind "gcn" or "sage".
func NewInput(kind string, adj, features *graph.CSR) (*Input, error) {
	if adj == nil || features == nil {
		return nil, fmt.Errorf("gnn: new input: nil adjacency or features")
	}
	if adj.Rows != adj.Cols {
		return nil, fmt.Errorf("gnn: new input: adjacency is %dx%d, not square", adj.Rows, adj.Cols)
	}
	if features.Rows != adj.Rows {
		return nil, fmt.Errorf("gnn: new input: %d feature rows for %d nodes", features.Rows, adj.Rows)
	}
	if err := adj.Validate(); err != nil {
		return nil, fmt.Errorf("gnn: new input: adjacency: %w", err)
	}
	x, err := newSparseNoT(features)
	if err != nil {
		return nil, fmt.Errorf("gnn: new input: features: %w", err)
	}
	var prop *graph.CSR
	switch kind {
	case KindGCN:
		prop, err = GCNNorm(adj)
	case KindSAGE:
		prop, err = MeanNorm(adj)
	default:
		return nil, fmt.Errorf("gnn: new input: unknown model kind %q (want %q or %q)", kind, KindGCN, KindSAGE)
	}
	if err != nil {
		return nil, err
	}
	p, err := NewSparse(prop)
	if err != nil {
		return nil, fmt.Errorf("gnn: new input: propagation: %w", err)
	}
	return &Input{Kind: kind, X: x, Prop: p}, nil
}

// N is the number of nodes.
func (in *Input) N() int { return in.X.Rows() }

// Features is the feature dimension F.
func (in *Input) Features() int { return in.X.Cols() }

// GCNNorm returns Â = D^-1/2 (A+I) D^-1/2 for a square adjacency A (Val nil
// means all ones), where D is the diagonal of row sums of A+I. A stored
// diagonal entry of A is increased by one. Weights must be non-negative.
func GCNNorm(adj *graph.CSR) (*graph.CSR, error) {
	n := adj.Rows
	if adj.Cols != n {
		return nil, fmt.Errorf("gnn: gcn norm: adjacency is %dx%d, not square", adj.Rows, adj.Cols)
	}
	deg := make([]float64, n)
	rowPtr := make([]int, n+1)
	for i := 0; i < n; i++ {
		cols, vals := adj.Row(i)
		deg[i] = 1
		hasDiag := false
		for k, c := range cols {
			v := 1.0
			if vals != nil {
				v = float64(vals[k])
			}
			if v < 0 || math.IsNaN(v) {
				return nil, fmt.Errorf("gnn: gcn norm: weight %v at (%d,%d) is negative", v, i, c)
			}
			deg[i] += v
			hasDiag = hasDiag || int(c) == i
		}
		rowPtr[i+1] = rowPtr[i] + len(cols)
		if !hasDiag {
			rowPtr[i+1]++
		}
	}
	col := make([]int32, rowPtr[n])
	val := make([]float32, rowPtr[n])
	inv := make([]float64, n)
	for i, d := range deg {
		inv[i] = 1 / math.Sqrt(d)
	}
	for i := 0; i < n; i++ {
		cols, vals := adj.Row(i)
		at := rowPtr[i]
		put := func(c int32, v float64) {
			col[at] = c
			val[at] = float32(v * inv[i] * inv[c])
			at++
		}
		diagDone := false
		for k, c := range cols {
			v := 1.0
			if vals != nil {
				v = float64(vals[k])
			}
			if !diagDone && int(c) >= i {
				if int(c) == i {
					v++
				} else {
					put(int32(i), 1)
				}
				diagDone = true
			}
			put(c, v)
		}
		if !diagDone {
			put(int32(i), 1)
		}
	}
	return &graph.CSR{Rows: n, Cols: n, RowPtr: rowPtr, ColIdx: col, Val: val}, nil
}

// MeanNorm returns the row-mean operator D⁻¹A of a square adjacency A (Val
// nil means all ones; otherwise each row is divided by its weight sum): row
// i of D⁻¹A·H is the (weighted) mean of i's neighbours' rows of H. A node
// without neighbours keeps an empty row, so its mean is zero.
func MeanNorm(adj *graph.CSR) (*graph.CSR, error) {
	n := adj.Rows
	if adj.Cols != n {
		return nil, fmt.Errorf("gnn: mean norm: adjacency is %dx%d, not square", adj.Rows, adj.Cols)
	}
	val := make([]float32, adj.NNZ())
	for i := 0; i < n; i++ {
		cols, vals := adj.Row(i)
		if len(cols) == 0 {
			continue
		}
		sum := float64(len(cols))
		if vals != nil {
			sum = 0
			for _, v := range vals {
				if v < 0 || math.IsNaN(float64(v)) {
					return nil, fmt.Errorf("gnn: mean norm: negative weight %v in row %d", v, i)
				}
				sum += float64(v)
			}
		}
		lo := adj.RowPtr[i]
		for k := range cols {
			v := 1.0
			if vals != nil {
				v = float64(vals[k])
			}
			if sum > 0 {
				val[lo+k] = float32(v / sum)
			}
		}
	}
	return &graph.CSR{Rows: n, Cols: n, RowPtr: adj.RowPtr, ColIdx: adj.ColIdx, Val: val}, nil
}
