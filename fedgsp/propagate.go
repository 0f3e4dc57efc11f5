package fedgsp

import (
	"math"
	"slices"

	"graphfed/graph"
)

// propagator is P = D^{-1/2} A D^{-1/2} of the symmetrised client graph
// without self loops (FedGSP's edgeindex_construct adds none), in CSR form
// over float64: the bases are powers of P up to K ≈ 10–15, and Algorithm 1
// orthogonalises against them, so they are built in double precision and
// only the mixed inputs are stored as float32. An isolated node has a zero
// row (its degree would divide by zero).
type propagator struct {
	n      int
	rowPtr []int
	col    []int32
	val    []float64
}

// newPropagator builds P from adj, which need not be symmetric or free of
// self loops: edges are unioned over both directions and loops dropped.
// Edge weights are ignored (A is binary).
func newPropagator(adj *graph.CSR) propagator {
	n := adj.Rows
	nbr := make([][]int32, n)
	for i := 0; i < n; i++ {
		cols, _ := adj.Row(i)
		for _, j := range cols {
			if int(j) == i || int(j) >= n {
				continue
			}
			nbr[i] = append(nbr[i], j)
			nbr[j] = append(nbr[j], int32(i))
		}
	}
	p := propagator{n: n, rowPtr: make([]int, n+1)}
	for i := range nbr {
		slices.Sort(nbr[i])
		nbr[i] = slices.Compact(nbr[i])
		p.rowPtr[i+1] = p.rowPtr[i] + len(nbr[i])
	}
	p.col = make([]int32, 0, p.rowPtr[n])
	for i := range nbr {
		p.col = append(p.col, nbr[i]...)
	}
	p.val = make([]float64, len(p.col))
	for i := 0; i < n; i++ {
		di := float64(len(nbr[i]))
		for k := p.rowPtr[i]; k < p.rowPtr[i+1]; k++ {
			dj := float64(len(nbr[p.col[k]]))
			p.val[k] = 1 / math.Sqrt(di*dj)
		}
	}
	return p
}

// apply sets dst = P·src for row-major n×cols matrices; dst must not alias
// src.
func (p propagator) apply(dst, src []float64, cols int) {
	for i := 0; i < p.n; i++ {
		out := dst[i*cols : (i+1)*cols]
		clear(out)
		for k := p.rowPtr[i]; k < p.rowPtr[i+1]; k++ {
			w := p.val[k]
			in := src[int(p.col[k])*cols : (int(p.col[k])+1)*cols]
			for j, v := range in {
				out[j] += w * v
			}
		}
	}
}

// DefaultHomophily is ĥ when no edge joins two training nodes: FedGSP's
// homocal returns 0.75 then.
const DefaultHomophily = 0.75

// EstimateHomophily is the edge homophily over the undirected edges whose
// two ends are both training nodes (summary decision 3: the authors' homocal
// walks ids 0..n_train−1 instead, a bug), with the number of such edges.
// Self loops are ignored; an edge stored in both directions counts once.
// With no such edge it returns DefaultHomophily and 0.
func EstimateHomophily(adj *graph.CSR, labels []int32, split []graph.Split) (float64, int) {
	type pair struct{ a, b int32 }
	seen := make(map[pair]struct{})
	same := 0
	for i := 0; i < adj.Rows; i++ {
		if split[i] != graph.SplitTrain || labels[i] < 0 {
			continue
		}
		cols, _ := adj.Row(i)
		for _, j := range cols {
			if int(j) == i || split[j] != graph.SplitTrain || labels[j] < 0 {
				continue
			}
			e := pair{int32(i), j}
			if e.b < e.a {
				e.a, e.b = e.b, e.a
			}
			if _, ok := seen[e]; ok {
				continue
			}
			seen[e] = struct{}{}
			if labels[i] == labels[j] {
				same++
			}
		}
	}
	if len(seen) == 0 {
		return DefaultHomophily, 0
	}
	return float64(same) / float64(len(seen)), len(seen)
}

// Angle is Algorithm 1's fixed angle θ = π/2·(1 − ĥ) between heterophily
// bases.
func Angle(h float64) float64 { return math.Pi / 2 * (1 - h) }
