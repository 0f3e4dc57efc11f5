package lightgcn

import (
	"fmt"
	"math"

	"graphfed/graph"
)

// NormalizedAdjacency returns Â = D^-1/2·A·D^-1/2 of the bipartite graph
// of train (Users × Items, one stored entry per interaction, values
// ignored): a symmetric (Users+Items)² CSR with users first, entry (u,
// Users+i) = (Users+i, u) = 1/sqrt(d_u·d_i). A node without interactions
// has an empty row (the official code maps its 1/sqrt(0) to 0).
func NormalizedAdjacency(train *graph.CSR) (*graph.CSR, error) {
	if err := train.Validate(); err != nil {
		return nil, fmt.Errorf("lightgcn: adjacency: %w", err)
	}
	nu, ni := train.Rows, train.Cols
	n := nu + ni
	invSqrt := make([]float64, n)
	itemDeg := make([]int, ni)
	for _, c := range train.ColIdx {
		itemDeg[c]++
	}
	for u := range nu {
		if d := train.Degree(u); d > 0 {
			invSqrt[u] = 1 / math.Sqrt(float64(d))
		}
	}
	for i, d := range itemDeg {
		if d > 0 {
			invSqrt[nu+i] = 1 / math.Sqrt(float64(d))
		}
	}
	nnz := 2 * train.NNZ()
	a := &graph.CSR{Rows: n, Cols: n, RowPtr: make([]int, n+1), ColIdx: make([]int32, nnz), Val: make([]float32, nnz)}
	// User rows are the train rows shifted; item rows are its transpose,
	// filled in user order so that every row's columns come out sorted.
	for u := range nu {
		a.RowPtr[u+1] = a.RowPtr[u] + train.Degree(u)
	}
	for i := range ni {
		a.RowPtr[nu+i+1] = a.RowPtr[nu+i] + itemDeg[i]
	}
	fill := make([]int, ni)
	for i := range ni {
		fill[i] = a.RowPtr[nu+i]
	}
	for u := range nu {
		cols, _ := train.Row(u)
		p := a.RowPtr[u]
		for k, c := range cols {
			v := float32(invSqrt[u] * invSqrt[nu+int(c)])
			a.ColIdx[p+k], a.Val[p+k] = int32(nu)+c, v
			q := fill[c]
			a.ColIdx[q], a.Val[q] = int32(u), v
			fill[c]++
		}
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("lightgcn: adjacency: %w", err)
	}
	return a, nil
}
