package edgegnn

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

// Multi-GNN's order features of a directed multigraph (Egressy et al.
// 2024): port numbers and time deltas. At a node, the edges of one
// direction are ordered by time (then id); an edge's port there is the rank
// of the other endpoint among the node's distinct neighbours of that
// direction, by first contact, and its time delta is the time since the
// node's previous edge of that direction (0 for the first). Both depend
// only on earlier edges, so computing them over a whole graph gives, for
// every edge of a temporal prefix (a training stage), the values the prefix
// alone gives, up to ties of equal timestamps: one computation serves every
// stage of a temporal split, and a federated client computes them over the
// transactions it sees.

// The columns of Batch.EdgeOrd, EdgeOrdDim in all.
const (
	EdgeOrdInPort   = 0 // log1p(in-port at the destination)/5
	EdgeOrdOutPort  = 1 // log1p(out-port at the source)/5
	EdgeOrdInDelta  = 2 // log1p(minutes since the destination's previous incoming edge)/10
	EdgeOrdOutDelta = 3 // log1p(minutes since the source's previous outgoing edge)/10
	// EdgeOrdDim is the number of order columns.
	EdgeOrdDim = 4
)

// edgeOrder computes the EdgeOrd rows of every edge of g (E×EdgeOrdDim,
// flat).
func edgeOrder(g *amlworld.Graph) []float32 {
	ne, n := g.NumEdges(), g.NumAccounts()
	ord := make([]float32, ne*EdgeOrdDim)
	// One pass per direction: group edges by node (the destination for
	// in-ports), order each group by time, rank first contacts.
	for _, dir := range []struct {
		at, other  []int32
		port, dlta int
	}{
		{g.Dst, g.Src, EdgeOrdInPort, EdgeOrdInDelta},
		{g.Src, g.Dst, EdgeOrdOutPort, EdgeOrdOutDelta},
	} {
		ptr := make([]int, n+1)
		for _, v := range dir.at {
			ptr[v+1]++
		}
		for v := range n {
			ptr[v+1] += ptr[v]
		}
		byNode := make([]int32, ne)
		fill := slices.Clone(ptr[:n])
		for e, v := range dir.at {
			byNode[fill[v]] = int32(e)
			fill[v]++
		}
		stamp := make([]int32, n) // node+1 whose group last ranked this neighbour
		rank := make([]int32, n)
		for v := range n {
			list := byNode[ptr[v]:ptr[v+1]]
			slices.SortFunc(list, func(a, b int32) int {
				if c := cmp.Compare(g.Time[a], g.Time[b]); c != 0 {
					return c
				}
				return cmp.Compare(a, b)
			})
			next := int32(0)
			for i, e := range list {
				u := dir.other[e]
				if stamp[u] != int32(v)+1 {
					stamp[u], rank[u] = int32(v)+1, next
					next++
				}
				r := ord[int(e)*EdgeOrdDim:]
				r[dir.port] = float32(math.Log1p(float64(rank[u])) / 5)
				if i > 0 {
					minutes := float64(g.Time[e]-g.Time[list[i-1]]) / 60
					r[dir.dlta] = float32(math.Log1p(max(minutes, 0)) / 10)
				}
			}
		}
	}
	return ord
}

// EnableOrder computes the order features of the featurizer's graph (16
// bytes per edge) so that Batch.SetInputs fills EdgeOrd: models with
// Ports or TimeDeltas need them.
func (f *Featurizer) EnableOrder() {
	if f.ord == nil {
		f.ord = edgeOrder(f.g)
	}
}

// HasOrder reports whether EnableOrder was called.
func (f *Featurizer) HasOrder() bool { return f.ord != nil }

// FillOrder sets row i of dst (len(edges)×EdgeOrdDim) to the order
// features of edge edges[i]. It panics without EnableOrder, on a shape
// mismatch or an edge outside the graph.
func (f *Featurizer) FillOrder(dst *gnn.Tensor, edges []int32) {
	if f.ord == nil {
		panic("gnn: edge order: EnableOrder not called")
	}
	if dst.Rows != len(edges) || dst.Cols != EdgeOrdDim {
		gnn.ShapePanic("edge order", "%v for %d edges and %d columns", dst, len(edges), EdgeOrdDim)
	}
	for i, e := range edges {
		copy(dst.Row(i), f.ord[int(e)*EdgeOrdDim:(int(e)+1)*EdgeOrdDim])
	}
}

// edgeAux adds a block of EdgeOrd columns to the encoded edge inputs
// through its own weights and no bias: e0 += x[:, c0:c0+k]·W, W k×H.
// Kept apart from the edge encoder so that turning the option off leaves
// the default schema untouched.
type edgeAux struct {
	W      *gnn.Param
	c0, k  int
	x      *gnn.Tensor // the columns of the last forward, n×k
	gw, tw *gnn.Tensor
}

func newEdgeAux(name string, c0, k, hidden int, rng *rand.Rand) *edgeAux {
	a := &edgeAux{W: gnn.NewParam(name+".W", k, hidden, true), c0: c0, k: k}
	a.W.Glorot(rng)
	return a
}

// forward adds the term into e (n×H) from ord (n×EdgeOrdDim).
func (a *edgeAux) forward(e, ord *gnn.Tensor) {
	a.x = edgeReuse(a.x, ord.Rows, a.k)
	for i := range ord.Rows {
		copy(a.x.Row(i), ord.Row(i)[a.c0:a.c0+a.k])
	}
	a.tw = edgeReuse(a.tw, e.Rows, e.Cols)
	gnn.MatMul(a.tw, a.x, a.W.W)
	gnn.Add(e, e, a.tw)
}

// backward adds xᵀ·de into W's gradient.
func (a *edgeAux) backward(de *gnn.Tensor) {
	a.gw = edgeReuse(a.gw, a.k, de.Cols)
	gnn.MatMulTN(a.gw, a.x, de)
	gnn.Add(a.W.G, a.W.G, a.gw)
}
