package graph

import (
	"math/rand/v2"
	"slices"
)

// wgraph is the vertex- and edge-weighted undirected graph the multilevel
// partitioner works on (METIS's graph_t without the multi-constraint parts).
// Every edge is stored in both directions; there are no self loops.
type wgraph struct {
	xadj  []int   // len n+1
	adj   []int32 // neighbours
	ewgt  []int32 // weight of each stored edge
	vwgt  []int32 // weight of each vertex (how many original nodes it stands for)
	total int     // sum of vwgt
}

func (g *wgraph) n() int { return len(g.xadj) - 1 }

// wgraphFromCSR symmetrises adj (so that a one-directional entry still
// counts as an edge, which keeps the gain bookkeeping consistent) and gives
// every vertex and edge weight one. Stored values are ignored: the
// partitioner cuts edges, not weights.
func wgraphFromCSR(adj *CSR) (*wgraph, error) {
	sym, err := FromEdges(adj.Rows, adj.Edges(), true)
	if err != nil {
		return nil, err
	}
	g := &wgraph{xadj: sym.RowPtr, adj: sym.ColIdx, ewgt: make([]int32, len(sym.ColIdx)),
		vwgt: make([]int32, sym.Rows), total: sym.Rows}
	for i := range g.ewgt {
		g.ewgt[i] = 1
	}
	for i := range g.vwgt {
		g.vwgt[i] = 1
	}
	return g, nil
}

// cut is the total weight of edges whose ends lie in different parts.
func (g *wgraph) cut(part []int32) int {
	c := 0
	for u := range g.n() {
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			if part[g.adj[e]] != part[u] {
				c += int(g.ewgt[e])
			}
		}
	}
	return c / 2
}

// matchHeavyEdges is METIS's sorted heavy-edge matching: vertices are
// visited by increasing degree (random order among equal degrees, so that
// low-degree vertices find a partner before their neighbours are taken) and
// each unmatched vertex pairs with the unmatched neighbour joined by the
// heaviest edge, provided the pair's weight stays at most maxVW (which keeps
// coarse vertices small enough to balance later). Isolated vertices are
// paired with each other. It returns cmap (fine -> coarse vertex), the
// coarse vertex count, and for each coarse vertex its one or two members.
func (g *wgraph) matchHeavyEdges(maxVW int32, rng *rand.Rand) (cmap []int32, members [][2]int32) {
	n := g.n()
	perm := rng.Perm(n)
	slices.SortStableFunc(perm, func(a, b int) int {
		return (g.xadj[a+1] - g.xadj[a]) - (g.xadj[b+1] - g.xadj[b])
	})
	match := make([]int32, n)
	for i := range match {
		match[i] = -1
	}
	cmap = make([]int32, n)
	lastIsolated := int32(-1)
	for _, ui := range perm {
		u := int32(ui)
		if match[u] >= 0 {
			continue
		}
		best, bestW := int32(-1), int32(-1)
		for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
			v := g.adj[e]
			if match[v] < 0 && g.ewgt[e] > bestW && g.vwgt[u]+g.vwgt[v] <= maxVW {
				best, bestW = v, g.ewgt[e]
			}
		}
		if best < 0 && g.xadj[u] == g.xadj[u+1] {
			// Pair isolated vertices so that a graph with many of them
			// still shrinks; the pair costs no cut wherever it goes.
			if v := lastIsolated; v >= 0 && g.vwgt[u]+g.vwgt[v] <= maxVW {
				lastIsolated = -1
				match[u], match[v] = v, u
				cmap[u] = cmap[v]
				members[cmap[v]] = [2]int32{v, u}
				continue
			}
			lastIsolated = u
		}
		if best < 0 {
			match[u] = u
			cmap[u] = int32(len(members))
			members = append(members, [2]int32{u, u})
			continue
		}
		match[u], match[best] = best, u
		cmap[u] = int32(len(members))
		cmap[best] = cmap[u]
		members = append(members, [2]int32{u, best})
	}
	return cmap, members
}

// contract builds the coarse graph whose vertices are the matched pairs:
// vertex weights add, parallel edges merge with their weights added, and
// the edge inside a pair disappears (it can no longer be cut).
func (g *wgraph) contract(cmap []int32, members [][2]int32) *wgraph {
	cn := len(members)
	c := &wgraph{xadj: make([]int, 1, cn+1), vwgt: make([]int32, cn), total: g.total,
		adj: make([]int32, 0, len(g.adj)/2), ewgt: make([]int32, 0, len(g.adj)/2)}
	slot := make([]int, cn) // position of coarse neighbour in the current row, or -1
	for i := range slot {
		slot[i] = -1
	}
	for cv, m := range members {
		start := len(c.adj)
		for k, u := range m {
			if k == 1 && u == m[0] {
				break
			}
			c.vwgt[cv] += g.vwgt[u]
			for e := g.xadj[u]; e < g.xadj[u+1]; e++ {
				w := cmap[g.adj[e]]
				if int(w) == cv {
					continue
				}
				if s := slot[w]; s >= 0 {
					c.ewgt[s] += g.ewgt[e]
					continue
				}
				slot[w] = len(c.adj)
				c.adj = append(c.adj, w)
				c.ewgt = append(c.ewgt, g.ewgt[e])
			}
		}
		for _, w := range c.adj[start:] {
			slot[w] = -1
		}
		c.xadj = append(c.xadj, len(c.adj))
	}
	return c
}

// subgraph is the graph induced by the vertices with side[v] == s; ids maps
// each of its vertices back to g's. Edges to the other side are dropped,
// as recursive bisection needs.
func (g *wgraph) subgraph(side []int32, s int32) (*wgraph, []int32) {
	local := make([]int32, g.n())
	var ids []int32
	for v := range g.n() {
		if side[v] == s {
			local[v] = int32(len(ids))
			ids = append(ids, int32(v))
		}
	}
	m := 0 // count first: growing adj by append dominated pairwise FM's cost
	for _, v := range ids {
		for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
			if side[g.adj[e]] == s {
				m++
			}
		}
	}
	h := &wgraph{xadj: make([]int, 1, len(ids)+1), vwgt: make([]int32, len(ids)),
		adj: make([]int32, 0, m), ewgt: make([]int32, 0, m)}
	for i, v := range ids {
		h.vwgt[i] = g.vwgt[v]
		h.total += int(g.vwgt[v])
		for e := g.xadj[v]; e < g.xadj[v+1]; e++ {
			if side[g.adj[e]] == s {
				h.adj = append(h.adj, local[g.adj[e]])
				h.ewgt = append(h.ewgt, g.ewgt[e])
			}
		}
		h.xadj = append(h.xadj, len(h.adj))
	}
	return h, ids
}
