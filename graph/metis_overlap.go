package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// OverlapClientsPerCommunity is FED-PUB's n_clien_per_comm: each METIS
// community is shared by this many clients.
const OverlapClientsPerCommunity = 5

// PartitionMetisOverlap is FED-PUB's overlapping partition (its
// data/generators/overlapping.py, which FedGSP's overlapping benchmarks
// use): METIS cuts the graph into max(1, clients/5) communities; client c
// belongs to community c·communities/clients (so clients 5i..5i+4 share
// community i when clients is a multiple of five, as in FED-PUB's M = 10,
// 30, 50), and samples, independently of the other clients, floor(s/2) of
// the community's s nodes without replacement. Clients of one community
// therefore overlap by about half their nodes and clients of different
// communities never do. It returns each client's nodes in ascending order;
// nodes no client sampled belong to none.
func PartitionMetisOverlap(adj *CSR, clients int, opt MetisOptions, rng *rand.Rand) ([][]int32, error) {
	if clients < 1 {
		return nil, fmt.Errorf("graph: partition metis-overlap: %d clients, want at least 1", clients)
	}
	comms := max(1, clients/OverlapClientsPerCommunity)
	owner, err := PartitionMetis(adj, comms, opt, rng)
	if err != nil {
		return nil, fmt.Errorf("graph: partition metis-overlap: %w", err)
	}
	members := make([][]int32, comms)
	for v, c := range owner {
		members[c] = append(members[c], int32(v))
	}
	out := make([][]int32, clients)
	for c := range out {
		comm := members[c*comms/clients]
		if len(comm) < 2 {
			return nil, fmt.Errorf("graph: partition metis-overlap: community of client %d has %d nodes, want at least 2", c, len(comm))
		}
		pool := slices.Clone(comm)
		take := len(pool) / 2
		for j := range take { // partial Fisher–Yates: the sample is pool[:take]
			r := j + rng.IntN(len(pool)-j)
			pool[j], pool[r] = pool[r], pool[j]
		}
		out[c] = pool[:take:take]
		slices.Sort(out[c])
	}
	return out, nil
}

// SplitByMembers cuts d into one ClientGraph per member list (global node
// ids, any order, no duplicates; lists may share nodes), each the subgraph
// induced by its nodes, with local ids in ascending global order like
// SplitByOwner. Features, labels and split are copied. Cross is left
// empty: FED-PUB drops the edges to nodes a client did not sample, and
// with overlapping clients an outside endpoint has no single owner.
func SplitByMembers(d *Dataset, members [][]int32) ([]*ClientGraph, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("graph: split by members: %w", err)
	}
	n := d.N()
	out := make([]*ClientGraph, len(members))
	owner := make([]int32, n)
	for c, ids := range members {
		for i := range owner {
			owner[i] = 1
		}
		for _, v := range ids {
			if v < 0 || int(v) >= n {
				return nil, fmt.Errorf("graph: split by members: client %d lists node %d outside [0,%d)", c, v, n)
			}
			if owner[v] == 0 {
				return nil, fmt.Errorf("graph: split by members: client %d lists node %d twice", c, v)
			}
			owner[v] = 0
		}
		parts, err := SplitByOwner(d, owner, 2)
		if err != nil {
			return nil, fmt.Errorf("graph: split by members: %w", err)
		}
		cg := parts[0]
		cg.Client = c
		cg.Cross = nil
		cg.Data.Name = fmt.Sprintf("%s/client-%d", d.Name, c)
		out[c] = cg
	}
	return out, nil
}
