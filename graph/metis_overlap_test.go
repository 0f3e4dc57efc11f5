package graph

import (
	"slices"
	"strings"
	"testing"
)

// toyDataset wraps adj with one feature per node (column v%3, value v+1),
// label v%3 and the given split for every node.
func toyDataset(adj *CSR, s Split) *Dataset {
	n := adj.Rows
	f := &CSR{Rows: n, Cols: 3, RowPtr: make([]int, n+1)}
	d := &Dataset{Name: "toy", Adj: adj, Features: f, Labels: make([]int32, n), Classes: 3, Split: make([]Split, n)}
	for v := range n {
		f.ColIdx = append(f.ColIdx, int32(v%3))
		f.Val = append(f.Val, float32(v+1))
		f.RowPtr[v+1] = v + 1
		d.Labels[v] = int32(v % 3)
		d.Split[v] = s
	}
	return d
}

// TestPartitionMetisOverlap checks FED-PUB's semantics: clients/5
// communities, five clients per community, each with half of it.
func TestPartitionMetisOverlap(t *testing.T) {
	adj := cliquesGraph(t, 4, 30, true) // four 30-cliques: the communities METIS finds
	tests := []struct {
		clients, comms int
	}{{10, 2}, {20, 4}, {5, 1}, {3, 1}, {12, 2}}
	for _, tc := range tests {
		members, err := PartitionMetisOverlap(adj, tc.clients, MetisOptions{}, seeded(4))
		if err != nil {
			t.Fatalf("%d clients: %v", tc.clients, err)
		}
		if len(members) != tc.clients {
			t.Fatalf("%d clients: got %d member lists", tc.clients, len(members))
		}
		commOf := make(map[int]map[int32]bool) // community index -> union of its clients' nodes
		for c, m := range members {
			comm := c * tc.comms / tc.clients
			if commOf[comm] == nil {
				commOf[comm] = map[int32]bool{}
			}
			if want := adj.Rows / tc.comms / 2; len(m) != want {
				t.Errorf("%d clients: client %d has %d nodes, want half of its community, %d", tc.clients, c, len(m), want)
			}
			if !slices.IsSorted(m) || len(slices.Compact(slices.Clone(m))) != len(m) {
				t.Errorf("%d clients: client %d's nodes not sorted and distinct", tc.clients, c)
			}
			for _, v := range m {
				commOf[comm][v] = true
			}
		}
		// Communities are disjoint: no node is sampled in two of them.
		seen := map[int32]int{}
		for comm, nodes := range commOf {
			for v := range nodes {
				if other, ok := seen[v]; ok {
					t.Errorf("%d clients: node %d in communities %d and %d", tc.clients, v, other, comm)
				}
				seen[v] = comm
			}
		}
		again, _ := PartitionMetisOverlap(adj, tc.clients, MetisOptions{}, seeded(4))
		for c := range members {
			if !slices.Equal(members[c], again[c]) {
				t.Errorf("%d clients: client %d not deterministic", tc.clients, c)
			}
		}
	}
	// Clients of one community sample independently: they differ.
	members, _ := PartitionMetisOverlap(adj, 10, MetisOptions{}, seeded(4))
	if slices.Equal(members[0], members[1]) {
		t.Error("clients 0 and 1 sampled the same nodes")
	}
	if _, err := PartitionMetisOverlap(adj, 0, MetisOptions{}, seeded(1)); err == nil {
		t.Error("0 clients accepted")
	}
	tiny := cliquesGraph(t, 1, 3, false)
	if _, err := PartitionMetisOverlap(tiny, 15, MetisOptions{}, seeded(1)); err == nil || !strings.Contains(err.Error(), "metis-overlap") {
		t.Errorf("3 communities of a 3-node graph: error %v", err)
	}
}

func TestSplitByMembers(t *testing.T) {
	adj := gridGraph(t, 3, 3) // 0 1 2 / 3 4 5 / 6 7 8
	d := toyDataset(adj, SplitTrain)
	cgs, err := SplitByMembers(d, [][]int32{{4, 0, 1, 3}, {1, 2, 5}, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		global []int32
		edges  int
	}{{[]int32{0, 1, 3, 4}, 4}, {[]int32{1, 2, 5}, 2}, {nil, 0}}
	for c, w := range want {
		cg := cgs[c]
		if cg.Client != c || !slices.Equal(cg.Global, w.global) && len(w.global) > 0 || cg.Data.Adj.NNZ() != 2*w.edges || cg.Cross != nil {
			t.Errorf("client %d: global %v, %d edges, cross %v; want %v, %d edges, no cross", c, cg.Global, cg.Data.Adj.NNZ()/2, cg.Cross, w.global, w.edges)
		}
		if err := cg.Data.Validate(); err != nil {
			t.Errorf("client %d: %v", c, err)
		}
		for l, g := range cg.Global {
			if cg.Data.Labels[l] != d.Labels[g] {
				t.Errorf("client %d: local %d label %d, global %d has %d", c, l, cg.Data.Labels[l], g, d.Labels[g])
			}
		}
	}
	for _, bad := range [][][]int32{{{9}}, {{-1}}, {{2, 2}}} {
		if _, err := SplitByMembers(d, bad); err == nil || !strings.Contains(err.Error(), "graph: split by members") {
			t.Errorf("members %v: error %v", bad, err)
		}
	}
}
