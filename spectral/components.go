package spectral

import (
	"slices"

	"graphfed/graph"
)

// The spectrum of a disconnected graph is the union of the spectra of its
// components, and eigenvectors of one component extended by zeros are
// eigenvectors of the whole. Solving component by component therefore
// gives eigenvalue 0 with its exact multiplicity (one per component), lets
// small components be solved densely, and exposes the bipartite ones to the
// fold of foldOp.

// component is one connected component of an adjacency.
type component struct {
	nodes     []int32 // global ids, ascending; local id = position
	bipartite bool    // two-colourable (no odd cycle, no self loop)
	color     []int8  // per local id, 0 or 1; set when bipartite
	entries   int     // stored adjacency entries inside the component
}

// components lists the connected components of a symmetric adjacency in
// order of their smallest node id.
func components(adj *graph.CSR) []component {
	n := adj.Rows
	comp := make([]int32, n)
	for i := range comp {
		comp[i] = -1
	}
	color := make([]int8, n)
	var out []component
	queue := make([]int32, 0, 64)
	for s := 0; s < n; s++ {
		if comp[s] >= 0 {
			continue
		}
		id := int32(len(out))
		c := component{bipartite: true}
		comp[s] = id
		queue = append(queue[:0], int32(s))
		for head := 0; head < len(queue); head++ {
			u := queue[head]
			cols, _ := adj.Row(int(u))
			c.entries += len(cols)
			for _, v := range cols {
				if comp[v] < 0 {
					comp[v] = id
					color[v] = 1 - color[u]
					queue = append(queue, v)
				} else if color[v] == color[u] {
					c.bipartite = false // odd cycle or self loop
				}
			}
		}
		c.nodes = append([]int32(nil), queue...)
		slices.Sort(c.nodes)
		if c.bipartite {
			c.color = make([]int8, len(c.nodes))
			for k, v := range c.nodes {
				c.color[k] = color[v]
			}
		}
		out = append(out, c)
	}
	return out
}

// subgraph returns the adjacency of c with local ids, and the degree
// scaling of its nodes taken from the whole graph (a component's degrees
// are its nodes' degrees). local must map every global id of c to its
// position and is left set.
func (c *component) subgraph(adj *graph.CSR, local []int32) *graph.CSR {
	for k, v := range c.nodes {
		local[v] = int32(k)
	}
	m := len(c.nodes)
	rowPtr := make([]int, m+1)
	col := make([]int32, 0, c.entries)
	var val []float32
	if adj.Val != nil {
		val = make([]float32, 0, c.entries)
	}
	for k, v := range c.nodes {
		cols, vals := adj.Row(int(v))
		for _, u := range cols {
			col = append(col, local[u]) // local ids are monotone in global ids: rows stay sorted
		}
		val = append(val, vals...)
		rowPtr[k+1] = len(col)
	}
	return &graph.CSR{Rows: m, Cols: m, RowPtr: rowPtr, ColIdx: col, Val: val}
}

// biadjacency splits a bipartite component's local adjacency sub into the
// block R between its two colour classes, rows being the smaller class.
// rows and cols give the local ids of R's rows and columns.
func (c *component) biadjacency(sub *graph.CSR) (r *graph.CSR, rows, cols []int32) {
	var side [2][]int32
	for k, col := range c.color {
		side[col] = append(side[col], int32(k))
	}
	a := 0
	if len(side[1]) < len(side[0]) {
		a = 1
	}
	rows, cols = side[a], side[1-a]
	pos := make([]int32, len(c.nodes)) // local id → index within its class
	for k, v := range rows {
		pos[v] = int32(k)
	}
	for k, v := range cols {
		pos[v] = int32(k)
	}
	rowPtr := make([]int, len(rows)+1)
	col := make([]int32, 0, sub.NNZ()/2)
	var val []float32
	if sub.Val != nil {
		val = make([]float32, 0, sub.NNZ()/2)
	}
	for k, v := range rows {
		nb, vals := sub.Row(int(v))
		for _, u := range nb {
			col = append(col, pos[u]) // monotone within a class: stays sorted
		}
		val = append(val, vals...)
		rowPtr[k+1] = len(col)
	}
	r = &graph.CSR{Rows: len(rows), Cols: len(cols), RowPtr: rowPtr, ColIdx: col, Val: val}
	return r, rows, cols
}
