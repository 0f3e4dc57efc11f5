package lightgcn

import (
	"fmt"
	"math"

	"graphfed/gnn"
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

// propagator runs LightGCN's K propagation layers through Â for one
// model, keeping the layer buffers across steps so that a training step
// allocates nothing large. Not for concurrent use.
//
// A training step needs the final embeddings of the batch's nodes only
// and has a gradient on those rows only, so:
//
//   - forward computes E_1..E_{K-1} over the whole graph (the batch's
//     receptive field is most of it) but the last layer only at the
//     batch's rows, one sparse row gather each;
//   - backward evaluates dE_0 = Σ_k Â^k·G/(K+1) by Horner's rule,
//     T_1 = Â·Ĝ + Ĝ, T_k = Â·T_{k-1} + Ĝ (Ĝ = G/(K+1)), using Âᵀ = Â; the
//     first product scatters only the batch's rows of Ĝ.
//
// That is 2(K−1) full sparse products per step instead of 2K.
type propagator struct {
	a      *graph.CSR // Â, n×n, symmetric
	layers int        // K
	// bufs are max(K−1, min(K, 2)) n×dim buffers: the step's forward keeps
	// E_1..E_{K−1} in them, the backward and the full forward alternate
	// between the first two.
	bufs []*gnn.Tensor
	row  [][]float32 // per goroutine: one dim-long row of the last layer
}

func newPropagator(a *graph.CSR, layers, dim int) propagator {
	p := propagator{a: a, layers: layers}
	for range max(layers-1, min(layers, 2)) {
		p.bufs = append(p.bufs, gnn.New(a.Rows, dim))
	}
	return p
}

// forwardBatch sets out (len(nodes)×dim) to the final embeddings
// (E_0 + … + E_K)/(K+1) of nodes, given the layer-0 embeddings e0
// (n×dim). bufs hold E_1..E_{K-1} afterwards.
func (p *propagator) forwardBatch(e0 *gnn.Tensor, nodes []int32, out *gnn.Tensor) {
	k, dim := p.layers, e0.Cols
	if out.Rows != len(nodes) || out.Cols != dim || e0.Rows != p.a.Rows {
		gnn.ShapePanic("lightgcn forward", "%d nodes into %dx%d from %dx%d", len(nodes), out.Rows, out.Cols, e0.Rows, e0.Cols)
	}
	prev := e0
	for l := 1; l < k; l++ {
		gnn.SpMM(p.bufs[l-1], p.a, prev)
		prev = p.bufs[l-1]
	}
	scale := float32(1) / float32(k+1)
	rows := func(lo, hi int, last []float32) {
		for j := lo; j < hi; j++ {
			s := int(nodes[j])
			o := out.Row(j)
			copy(o, e0.Row(s))
			for l := 1; l < k; l++ {
				gnn.AddInto(o, p.bufs[l-1].Row(s))
			}
			if k > 0 {
				lo, hi := p.a.RowPtr[s], p.a.RowPtr[s+1]
				gnn.GatherSparse(last, p.a.ColIdx[lo:hi], p.a.Val[lo:hi], prev.Data, dim)
				gnn.AddInto(o, last)
			}
			for c := range o {
				o[c] *= scale
			}
		}
	}
	w := gnn.ParallelWorkers(len(nodes), len(nodes)*dim*(k+16))
	for len(p.row) < w {
		p.row = append(p.row, make([]float32, dim))
	}
	if w <= 1 {
		rows(0, len(nodes), p.row[0])
		return
	}
	n := len(nodes)
	gnn.ParallelSplit(n, w, func(lo, hi int) {
		c := 0 // which chunk: ParallelSplit's chunk c starts at c·n/w
		for c*n/w != lo {
			c++
		}
		rows(lo, hi, p.row[c])
	})
}

// backward sets grad (n×dim) to dE_0 = Σ_{k=0..K} Â^k·G/(K+1) for the
// gradient G of the final embeddings, which is zero except at rows nodes
// (distinct), where it is g (len(nodes)×dim). g is scaled by 1/(K+1) in
// place.
func (p *propagator) backward(nodes []int32, g, grad *gnn.Tensor) {
	k, dim := p.layers, grad.Cols
	if g.Rows != len(nodes) || g.Cols != dim || grad.Rows != p.a.Rows {
		gnn.ShapePanic("lightgcn backward", "%d nodes, g %dx%d into %dx%d", len(nodes), g.Rows, g.Cols, grad.Rows, grad.Cols)
	}
	scale := float32(1) / float32(k+1)
	for c := range g.Data {
		g.Data[c] *= scale
	}
	addG := func(t *gnn.Tensor) {
		for j, s := range nodes {
			gnn.AddInto(t.Row(int(s)), g.Row(j))
		}
	}
	dest := func(l int) *gnn.Tensor {
		if l == k {
			return grad
		}
		return p.bufs[(l-1)%2]
	}
	if k == 0 {
		clear(grad.Data)
		addG(grad)
		return
	}
	// T_1 = Â·Ĝ + Ĝ: scatter the batch's rows (serial: rows of different
	// nodes collide, and this is a small share of the step).
	t := dest(1)
	clear(t.Data)
	for j, s := range nodes {
		lo, hi := p.a.RowPtr[s], p.a.RowPtr[s+1]
		gnn.ScatterSparse(t.Data, p.a.ColIdx[lo:hi], p.a.Val[lo:hi], g.Row(j), dim)
	}
	addG(t)
	for l := 2; l <= k; l++ {
		next := dest(l)
		gnn.SpMM(next, p.a, t)
		addG(next)
		t = next
	}
}

// forwardAll sets out (n×dim) to the final embeddings of every node.
// It uses the step buffers (their contents are not kept).
func (p *propagator) forwardAll(e0, out *gnn.Tensor) {
	copy(out.Data, e0.Data)
	prev := e0
	for l := 1; l <= p.layers; l++ {
		cur := p.bufs[(l-1)%len(p.bufs)] // K = 1 has one buffer, else ≥ 2
		gnn.SpMM(cur, p.a, prev)
		gnn.AddInto(out.Data, cur.Data)
		prev = cur
	}
	scale := float32(1) / float32(p.layers+1)
	for c := range out.Data {
		out.Data[c] *= scale
	}
}
