package spectral

import (
	"math/rand/v2"
	"testing"

	"graphfed/graph"
)

// Test graphs with known spectral features. Each returns a symmetric
// adjacency.

func mustEdges(tb testing.TB, n int, e []graph.Edge) *graph.CSR {
	tb.Helper()
	a, err := graph.FromEdges(n, e, true)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func pathGraph(tb testing.TB, n int) *graph.CSR {
	var e []graph.Edge
	for i := 0; i+1 < n; i++ {
		e = append(e, graph.Edge{U: int32(i), V: int32(i + 1)})
	}
	return mustEdges(tb, n, e)
}

// cycleGraph: eigenvalues 1 − cos(2πk/n), each twice but 0 (and 2 for even
// n) once.
func cycleGraph(tb testing.TB, n int) *graph.CSR {
	var e []graph.Edge
	for i := 0; i < n; i++ {
		e = append(e, graph.Edge{U: int32(i), V: int32((i + 1) % n)})
	}
	return mustEdges(tb, n, e)
}

// starGraph: eigenvalues 0, 2 and 1 with multiplicity n−2.
func starGraph(tb testing.TB, n int) *graph.CSR {
	var e []graph.Edge
	for i := 1; i < n; i++ {
		e = append(e, graph.Edge{U: 0, V: int32(i)})
	}
	return mustEdges(tb, n, e)
}

// gridGraph is the r×c lattice; a square one has double eigenvalues.
func gridGraph(tb testing.TB, r, c int) *graph.CSR {
	var e []graph.Edge
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := int32(i*c + j)
			if j+1 < c {
				e = append(e, graph.Edge{U: v, V: v + 1})
			}
			if i+1 < r {
				e = append(e, graph.Edge{U: v, V: v + int32(c)})
			}
		}
	}
	return mustEdges(tb, r*c, e)
}

// hypercube Q_d: bipartite, eigenvalue 2k/d with multiplicity C(d, k), so
// multiplicities far above the Lanczos block size.
func hypercube(tb testing.TB, d int) *graph.CSR {
	n := 1 << d
	var e []graph.Edge
	for v := 0; v < n; v++ {
		for b := 0; b < d; b++ {
			if u := v ^ (1 << b); u > v {
				e = append(e, graph.Edge{U: int32(v), V: int32(u)})
			}
		}
	}
	return mustEdges(tb, n, e)
}

// union returns the disjoint union of the graphs, node ids offset in
// order.
func union(tb testing.TB, gs ...*graph.CSR) *graph.CSR {
	var e []graph.Edge
	off := int32(0)
	for _, g := range gs {
		for _, x := range g.Edges() {
			e = append(e, graph.Edge{U: x.U + off, V: x.V + off})
		}
		off += int32(g.Rows)
	}
	return mustEdges(tb, int(off), e)
}

// isolated appends k isolated nodes to g.
func isolated(tb testing.TB, g *graph.CSR, k int) *graph.CSR {
	return union(tb, g, mustEdges(tb, k, nil))
}

func erGraph(tb testing.TB, n int, p float64, seed uint64) *graph.CSR {
	tb.Helper()
	a, err := ErdosRenyi(n, p, rand.New(rand.NewPCG(seed, 3)))
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func gnmkGraph(tb testing.TB, users, items, edges int, seed uint64) *graph.CSR {
	tb.Helper()
	r, err := GNMK(users, items, edges, rand.New(rand.NewPCG(seed, 5)))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func bipartiteOf(tb testing.TB, r *graph.CSR) *graph.CSR {
	tb.Helper()
	a, err := BipartiteAdjacency(r)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// weighted gives every undirected edge of g a weight in [0.5, 2).
func weighted(g *graph.CSR, seed uint64) *graph.CSR {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := &graph.CSR{Rows: g.Rows, Cols: g.Cols, RowPtr: g.RowPtr, ColIdx: g.ColIdx, Val: make([]float32, g.NNZ())}
	for i := 0; i < g.Rows; i++ {
		for p := g.RowPtr[i]; p < g.RowPtr[i+1]; p++ {
			j := int(g.ColIdx[p])
			if j < i {
				continue
			}
			w := float32(0.5 + 1.5*rng.Float64())
			out.Val[p] = w
			for q := g.RowPtr[j]; q < g.RowPtr[j+1]; q++ {
				if int(g.ColIdx[q]) == i {
					out.Val[q] = w
				}
			}
		}
	}
	return out
}
