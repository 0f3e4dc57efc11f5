package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"
)

// Partitioners decide which client hosts each node. They return owner, with
// owner[v] in [0,clients), and are deterministic for a seeded rng.

// PartitionRandom deals a random permutation of the n nodes round-robin, so
// client sizes differ by at most one and no client is empty.
func PartitionRandom(n, clients int, rng *rand.Rand) ([]int32, error) {
	if err := checkClients("random", n, clients); err != nil {
		return nil, err
	}
	owner := make([]int32, n)
	for k, v := range rng.Perm(n) {
		owner[v] = int32(k % clients)
	}
	return owner, nil
}

// PartitionLouvain finds Louvain communities (gonum, resolution 1) and packs
// them onto clients the way FedSage+ and FedGraph do: communities larger than
// ceil(n/clients) are first cut into pieces of at most that size (FedSage's
// louvain_graph_cutting), then pieces go, largest first, to the currently
// smallest client. Cutting follows breadth-first order inside the community
// so that a piece stays connected where it can. If there are still fewer
// pieces than clients, the largest piece is halved until every client can get
// one; hence no client is empty.
func PartitionLouvain(adj *CSR, clients int, rng *rand.Rand) ([]int32, error) {
	if err := adj.Validate(); err != nil {
		return nil, fmt.Errorf("graph: partition louvain: %w", err)
	}
	n := adj.Rows
	if adj.Cols != n {
		return nil, fmt.Errorf("graph: partition louvain: adjacency is %dx%d, want square", adj.Rows, adj.Cols)
	}
	if err := checkClients("louvain", n, clients); err != nil {
		return nil, err
	}

	g := simple.NewUndirectedGraph()
	for v := 0; v < n; v++ {
		g.AddNode(simple.Node(v))
	}
	for u := 0; u < n; u++ {
		cols, _ := adj.Row(u)
		for _, v := range cols {
			if int(v) > u { // SetEdge is undirected; one direction suffices
				g.SetEdge(simple.Edge{F: simple.Node(u), T: simple.Node(v)})
			}
		}
	}
	// gonum's Louvain is deterministic for a fixed source: every tie and map
	// iteration it depends on is resolved by sorting or by integer weights.
	reduced := community.Modularize(g, 1, rand.NewPCG(rng.Uint64(), rng.Uint64()))
	comms := reduced.Communities()

	capacity := (n + clients - 1) / clients
	member := make([]int32, n) // community index of each node
	var pieces [][]int32
	for ci, comm := range comms {
		for _, nd := range comm {
			member[nd.ID()] = int32(ci)
		}
	}
	for ci, comm := range comms {
		if len(comm) == 0 {
			continue
		}
		ids := make([]int32, len(comm))
		for k, nd := range comm {
			ids[k] = int32(nd.ID())
		}
		slices.Sort(ids)
		if len(ids) > capacity {
			ids = bfsOrder(adj, ids, member, int32(ci))
		}
		for len(ids) > capacity {
			pieces = append(pieces, ids[:capacity])
			ids = ids[capacity:]
		}
		pieces = append(pieces, ids)
	}
	for len(pieces) < clients {
		big := 0
		for k, p := range pieces {
			if len(p) > len(pieces[big]) {
				big = k
			}
		}
		p := pieces[big]
		pieces[big] = p[:len(p)/2]
		pieces = append(pieces, p[len(p)/2:])
	}
	return packPieces(n, clients, pieces), nil
}

// packPieces assigns pieces, largest first (ties: lowest smallest node id),
// each to the client with the fewest nodes so far (ties: lowest client).
func packPieces(n, clients int, pieces [][]int32) []int32 {
	for _, p := range pieces {
		slices.Sort(p)
	}
	slices.SortFunc(pieces, func(a, b []int32) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return int(a[0]) - int(b[0])
	})
	owner := make([]int32, n)
	load := make([]int, clients)
	for _, p := range pieces {
		c := 0
		for k := 1; k < clients; k++ {
			if load[k] < load[c] {
				c = k
			}
		}
		for _, v := range p {
			owner[v] = int32(c)
		}
		load[c] += len(p)
	}
	return owner
}

// bfsOrder returns the members of community ci (ids, sorted) in
// breadth-first order over the edges inside the community, starting each
// component at its smallest unvisited id.
func bfsOrder(adj *CSR, ids []int32, member []int32, ci int32) []int32 {
	order := make([]int32, 0, len(ids))
	seen := make(map[int32]bool, len(ids))
	for _, s := range ids {
		if seen[s] {
			continue
		}
		seen[s] = true
		head := len(order)
		order = append(order, s)
		for head < len(order) {
			u := order[head]
			head++
			nbrs, _ := adj.Row(int(u))
			for _, v := range nbrs {
				if member[v] == ci && !seen[v] {
					seen[v] = true
					order = append(order, v)
				}
			}
		}
	}
	return order
}

func checkClients(kind string, n, clients int) error {
	if clients < 1 || clients > n {
		return fmt.Errorf("graph: partition %s: %d clients for %d nodes, want 1..%d", kind, clients, n, n)
	}
	return nil
}
