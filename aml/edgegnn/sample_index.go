package edgegnn

import (
	"fmt"

	"graphfed/aml/amlworld"
)

// Index is the adjacency of a directed multigraph restricted to a set
// of visible edges: for every node its outgoing and incoming edge ids, in
// ascending id order (time order for an AMLworld file). It is what the
// neighbour sampler walks and what structural node features count. Build
// one per stage of a temporal split (training edges; training and
// validation edges; all edges) or per federated client (the edges the
// client sees). Node and edge ids are those of the underlying graph.
type Index struct {
	src, dst       []int32 // endpoints of every edge of the underlying graph
	outPtr, inPtr  []int   // len N+1
	outEdge, inEdg []int32 // edge ids by source and by destination
	// outAdj and inAdj are outEdge and inEdg with each edge's other
	// endpoint alongside (destination, source): the sampler reads a picked
	// edge and the node it leads to in one cache line, where reading the
	// endpoint from dst or src cost a second random access per pick.
	outAdj, inAdj []adjEntry
	deg           []int32 // Degree of every node, read once per sampled node
	visible       int
}

// NewIndex indexes the edges listed in visible (all edges of the graph
// when visible is nil) of a graph with n nodes whose edge e goes from
// src[e] to dst[e]. It returns an error for mismatched lengths, endpoints
// outside [0, n) or visible ids outside [0, len(src)); duplicates in
// visible are indexed once.
func NewIndex(n int, src, dst []int32, visible []int32) (*Index, error) {
	const op = "gnn: new edge index"
	if n < 0 || len(src) != len(dst) {
		return nil, fmt.Errorf("%s: %d nodes, %d sources, %d destinations", op, n, len(src), len(dst))
	}
	var seen []bool
	if visible == nil {
		visible = make([]int32, len(src))
		for e := range visible {
			visible[e] = int32(e)
		}
	} else {
		seen = make([]bool, len(src))
	}
	x := &Index{src: src, dst: dst, outPtr: make([]int, n+1), inPtr: make([]int, n+1)}
	keep := visible[:0:0]
	for _, e := range visible {
		if e < 0 || int(e) >= len(src) {
			return nil, fmt.Errorf("%s: edge %d outside [0,%d)", op, e, len(src))
		}
		s, d := src[e], dst[e]
		if s < 0 || int(s) >= n || d < 0 || int(d) >= n {
			return nil, fmt.Errorf("%s: edge %d (%d→%d) has an endpoint outside [0,%d)", op, e, s, d, n)
		}
		if seen != nil {
			if seen[e] {
				continue
			}
			seen[e] = true
		}
		keep = append(keep, e)
		x.outPtr[s+1]++
		x.inPtr[d+1]++
	}
	for v := range n {
		x.outPtr[v+1] += x.outPtr[v]
		x.inPtr[v+1] += x.inPtr[v]
	}
	x.visible = len(keep)
	x.deg = make([]int32, n)
	for v := range n {
		x.deg[v] = int32(x.outPtr[v+1] - x.outPtr[v] + x.inPtr[v+1] - x.inPtr[v])
	}
	x.outEdge = make([]int32, len(keep))
	x.inEdg = make([]int32, len(keep))
	x.outAdj = make([]adjEntry, len(keep))
	x.inAdj = make([]adjEntry, len(keep))
	outAt, inAt := append([]int(nil), x.outPtr[:n]...), append([]int(nil), x.inPtr[:n]...)
	// Visit edges in ascending id order so that every list is sorted.
	if seen != nil {
		for e, ok := range seen {
			if ok {
				x.place(int32(e), outAt, inAt)
			}
		}
	} else {
		for _, e := range keep {
			x.place(e, outAt, inAt)
		}
	}
	return x, nil
}

func (x *Index) place(e int32, outAt, inAt []int) {
	s, d := x.src[e], x.dst[e]
	x.outEdge[outAt[s]] = e
	x.outAdj[outAt[s]] = adjEntry{e, d}
	outAt[s]++
	x.inEdg[inAt[d]] = e
	x.inAdj[inAt[d]] = adjEntry{e, s}
	inAt[d]++
}

// adjEntry is an adjacency entry: an edge and its endpoint at the far
// side from the node whose list holds it.
type adjEntry struct {
	edge, other int32
}

// NewGraphIndex indexes the given edges of g (all when edges is nil).
func NewGraphIndex(g *amlworld.Graph, edges []int32) (*Index, error) {
	return NewIndex(g.NumAccounts(), g.Src, g.Dst, edges)
}

// NumNodes is the number of nodes N of the underlying graph.
func (x *Index) NumNodes() int { return len(x.outPtr) - 1 }

// NumEdges is the number of visible edges.
func (x *Index) NumEdges() int { return x.visible }

// NumGraphEdges is the number of edges of the underlying graph, visible or
// not: edge ids are below it.
func (x *Index) NumGraphEdges() int { return len(x.src) }

// Endpoints returns the source and destination of edge e.
func (x *Index) Endpoints(e int32) (src, dst int32) { return x.src[e], x.dst[e] }

// OutEdges returns the visible edges leaving v, ascending (aliasing x).
func (x *Index) OutEdges(v int32) []int32 { return x.outEdge[x.outPtr[v]:x.outPtr[v+1]] }

// InEdges returns the visible edges entering v, ascending (aliasing x).
func (x *Index) InEdges(v int32) []int32 { return x.inEdg[x.inPtr[v]:x.inPtr[v+1]] }

// Degree is the number of visible edges at v, both directions (a
// self-transfer counts twice).
func (x *Index) Degree(v int32) int {
	return x.outPtr[v+1] - x.outPtr[v] + x.inPtr[v+1] - x.inPtr[v]
}
