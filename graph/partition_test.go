package graph

import (
	"slices"
	"strings"
	"testing"
)

func TestPartitionRandom(t *testing.T) {
	tests := []struct{ n, clients int }{{1, 1}, {10, 3}, {10, 10}, {1000, 7}}
	for _, tc := range tests {
		owner, err := PartitionRandom(tc.n, tc.clients, seeded(5))
		if err != nil {
			t.Fatalf("n=%d clients=%d: %v", tc.n, tc.clients, err)
		}
		sizes := clientSizes(t, owner, tc.clients)
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Errorf("n=%d clients=%d: sizes %v differ by more than one", tc.n, tc.clients, sizes)
		}
		again, _ := PartitionRandom(tc.n, tc.clients, seeded(5))
		if !slices.Equal(owner, again) {
			t.Errorf("n=%d clients=%d: not deterministic", tc.n, tc.clients)
		}
	}
}

func TestPartitionClientsOutOfRange(t *testing.T) {
	adj, err := FromEdges(4, []Edge{{0, 1}, {2, 3}}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, clients := range []int{-1, 0, 5} {
		if _, err := PartitionRandom(4, clients, seeded(1)); err == nil || !strings.Contains(err.Error(), "graph: partition random: ") {
			t.Errorf("random, %d clients: error %v", clients, err)
		}
		if _, err := PartitionLouvain(adj, clients, seeded(1)); err == nil || !strings.Contains(err.Error(), "graph: partition louvain: ") {
			t.Errorf("louvain, %d clients: error %v", clients, err)
		}
	}
	bad := &CSR{Rows: 2, Cols: 2, RowPtr: []int{0, 1}, ColIdx: []int32{1}}
	if _, err := PartitionLouvain(bad, 1, seeded(1)); err == nil {
		t.Error("louvain accepted a malformed adjacency")
	}
}

// TestPartitionLouvainSmall: two triangles joined by one edge form two
// communities, which two clients must get one each.
func TestPartitionLouvainSmall(t *testing.T) {
	edges := []Edge{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}, {2, 3}}
	adj, err := FromEdges(6, edges, true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		adj     *CSR
		clients int
	}{
		{"two triangles, two clients", adj, 2},
		{"two triangles, one client", adj, 1},
		{"two triangles, six clients", adj, 6},
		{"two triangles, four clients", adj, 4},
		{"no edges", &CSR{Rows: 5, Cols: 5, RowPtr: make([]int, 6)}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owner, err := PartitionLouvain(tc.adj, tc.clients, seeded(9))
			if err != nil {
				t.Fatal(err)
			}
			sizes := clientSizes(t, owner, tc.clients)
			if slices.Min(sizes) == 0 {
				t.Errorf("empty client: sizes %v", sizes)
			}
			if tc.clients == 2 && tc.adj == adj {
				if owner[0] != owner[1] || owner[1] != owner[2] || owner[3] != owner[4] || owner[4] != owner[5] || owner[0] == owner[3] {
					t.Errorf("owner %v does not follow the two triangles", owner)
				}
			}
		})
	}
}

func TestPartitionLouvainCora(t *testing.T) {
	d, err := LoadTSV(sharedDataset(t, "cora"))
	if err != nil {
		t.Fatal(err)
	}
	const clients = 10
	owner, err := PartitionLouvain(d.Adj, clients, seeded(42))
	if err != nil {
		t.Fatal(err)
	}
	again, err := PartitionLouvain(d.Adj, clients, seeded(42))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(owner, again) {
		t.Error("same seed gave a different partition")
	}
	sizes := clientSizes(t, owner, clients)
	// Greedy packing of pieces of at most ceil(n/clients) nodes keeps every
	// client within a factor of two of the mean.
	mean := d.N() / clients
	if slices.Min(sizes) < mean/2 || slices.Max(sizes) > 2*mean {
		t.Errorf("client sizes %v unbalanced around %d", sizes, mean)
	}
	cgs, err := SplitByOwner(d, owner, clients)
	if err != nil {
		t.Fatal(err)
	}
	checkEdgeAccounting(t, d, owner, cgs)
	s := PartitionStats(cgs)
	t.Logf("cora louvain-10: sizes %v, internal %d, cross %d (share %.3f), imbalance %.3f",
		sizes, s.InternalEdges, s.CrossEdges, s.CrossShare, s.Imbalance)
	// Louvain's point: far fewer cut edges than a random partition (~90%).
	if s.CrossShare > 0.3 {
		t.Errorf("cross-edge share %.3f, want a community-respecting cut", s.CrossShare)
	}
}

func clientSizes(t *testing.T, owner []int32, clients int) []int {
	t.Helper()
	sizes := make([]int, clients)
	for v, c := range owner {
		if c < 0 || int(c) >= clients {
			t.Fatalf("node %d owned by %d, outside [0,%d)", v, c, clients)
		}
		sizes[c]++
	}
	return sizes
}

func BenchmarkPartitionLouvainCora(b *testing.B) {
	d, err := LoadTSV(sharedDataset(b, "cora"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := PartitionLouvain(d.Adj, 10, seeded(1)); err != nil {
			b.Fatal(err)
		}
	}
}
