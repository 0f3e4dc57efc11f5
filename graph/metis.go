package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MetisOptions tunes PartitionMetis. The zero value of a field means its
// default (DefaultMetisOptions).
type MetisOptions struct {
	// Imbalance is the tolerated excess of the largest part over n/k:
	// 0.03 (METIS's default ufactor 30) allows parts of up to 1.03·n/k.
	Imbalance float64
	// CoarsenTo stops coarsening once the graph has at most this many
	// vertices; 0 means max(30·k, 200), METIS's k-way rule of thumb.
	CoarsenTo int
	// InitTries is how many greedy-growing starts each bisection of the
	// initial partitioning tries.
	InitTries int
	// RefinePasses bounds the refinement passes per level.
	RefinePasses int
}

// DefaultMetisOptions is METIS 5's k-way defaults, as far as they apply.
func DefaultMetisOptions() MetisOptions {
	return MetisOptions{Imbalance: 0.03, InitTries: 8, RefinePasses: 10}
}

func (o MetisOptions) withDefaults(k int) (MetisOptions, error) {
	d := DefaultMetisOptions()
	if o.Imbalance == 0 {
		o.Imbalance = d.Imbalance
	}
	if !(o.Imbalance > 0 && o.Imbalance <= 1) {
		return o, fmt.Errorf("imbalance %v not in (0, 1]", o.Imbalance)
	}
	if o.CoarsenTo <= 0 {
		o.CoarsenTo = max(30*k, 200)
	}
	if o.InitTries <= 0 {
		o.InitTries = d.InitTries
	}
	if o.RefinePasses <= 0 {
		o.RefinePasses = d.RefinePasses
	}
	return o, nil
}

// coarsenFraction: coarsening stops when a level keeps more than this share
// of its vertices (a star or a clique-heavy graph that no longer matches).
const coarsenFraction = 0.9

// PartitionMetis is a multilevel k-way partitioner in the manner of METIS
// (Karypis & Kumar 1998), the partitioner FED-PUB and FedGSP use: it
// coarsens the graph by heavy-edge matching down to about opt.CoarsenTo
// vertices, cuts the coarsest graph by recursive bisection (greedy graph
// growing plus Fiduccia–Mattheyses), then projects the parts back level by
// level with greedy boundary refinement under the balance bound, followed
// by two-way FM between every pair of adjacent parts (pairwiseFM) where
// greedy moves stall against the bound. Parts are
// never empty and, on graphs with unit weights, never larger than
// floor((1+opt.Imbalance)·n/k) nor smaller than one node. The edge weights
// (adj.Val) are ignored. The result is deterministic for a seeded rng.
func PartitionMetis(adj *CSR, clients int, opt MetisOptions, rng *rand.Rand) ([]int32, error) {
	if err := adj.Validate(); err != nil {
		return nil, fmt.Errorf("graph: partition metis: %w", err)
	}
	n := adj.Rows
	if adj.Cols != n {
		return nil, fmt.Errorf("graph: partition metis: adjacency is %dx%d, want square", adj.Rows, adj.Cols)
	}
	if err := checkClients("metis", n, clients); err != nil {
		return nil, err
	}
	opt, err := opt.withDefaults(clients)
	if err != nil {
		return nil, fmt.Errorf("graph: partition metis: %w", err)
	}
	g, err := wgraphFromCSR(adj)
	if err != nil {
		return nil, fmt.Errorf("graph: partition metis: %w", err)
	}

	// Coarsen.
	graphs, cmaps := g.coarsen(opt.CoarsenTo, rng)

	// Initial partition of the coarsest graph.
	coarsest := graphs[len(graphs)-1]
	part := make([]int32, coarsest.n())
	coarsest.recursiveBisection(clients, 0, part, nil, opt, rng)

	// Uncoarsen: refine at each level, project to the next finer one.
	maxPW := max(int(math.Floor((1+opt.Imbalance)*float64(g.total)/float64(clients))),
		(g.total+clients-1)/clients)
	for lvl := len(graphs) - 1; ; lvl-- {
		r := newKway(graphs[lvl], part, clients, maxPW)
		r.refine(opt.RefinePasses, rng)
		if clients > 1 && pairwiseFM(graphs[lvl], part, clients, maxPW, opt.RefinePasses) > 0 {
			r = newKway(graphs[lvl], part, clients, maxPW)
			r.refine(opt.RefinePasses, rng)
		}
		if lvl == 0 {
			r.fillEmpty()
			return part, nil
		}
		fine := make([]int32, graphs[lvl-1].n())
		for u, c := range cmaps[lvl-1] {
			fine[u] = part[c]
		}
		part = fine
	}
}

// EdgeCut counts the undirected edges of adj whose ends have different
// owners (each stored direction counts half), the quantity METIS minimises.
func EdgeCut(adj *CSR, owner []int32) int {
	c := 0
	for u := range adj.Rows {
		cols, _ := adj.Row(u)
		for _, v := range cols {
			if owner[v] != owner[u] {
				c++
			}
		}
	}
	return c / 2
}

// PartImbalance is the largest part's size over the mean part size
// n/clients: 1 is perfect balance, 1.03 is METIS's default bound.
func PartImbalance(owner []int32, clients int) float64 {
	if len(owner) == 0 || clients < 1 {
		return 0
	}
	size := make([]int, clients)
	big := 0
	for _, c := range owner {
		size[c]++
		big = max(big, size[c])
	}
	return float64(big) * float64(clients) / float64(len(owner))
}
