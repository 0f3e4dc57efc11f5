package spectral

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/graph"
)

// plantedBipartite builds blocks of users and items where each user has
// deg items in its own block and, with probability cross, one in another:
// a user–item graph with a known community structure. It returns r, the
// block of each user, and appends lone components: two users sharing two
// items, and two users without interactions.
func plantedBipartite(blocks, usersPer, itemsPer, deg int, cross float64, seed uint64) (*graph.CSR, []int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	users := blocks*usersPer + 4
	items := blocks*itemsPer + 2
	rowPtr := []int{0}
	var col []int32
	block := make([]int, users)
	for u := 0; u < blocks*usersPer; u++ {
		b := u / usersPer
		block[u] = b
		set := map[int32]bool{}
		for len(set) < deg {
			set[int32(b*itemsPer+rng.IntN(itemsPer))] = true
		}
		if rng.Float64() < cross {
			o := (b + 1 + rng.IntN(blocks-1)) % blocks
			set[int32(o*itemsPer+rng.IntN(itemsPer))] = true
		}
		row := make([]int32, 0, len(set))
		for i := range set {
			row = append(row, i)
		}
		slices.Sort(row)
		col = append(col, row...)
		rowPtr = append(rowPtr, len(col))
	}
	lone := int32(blocks * itemsPer)
	for u := blocks * usersPer; u < users; u++ {
		block[u] = -1
		if u < blocks*usersPer+2 {
			col = append(col, lone, lone+1)
		}
		rowPtr = append(rowPtr, len(col))
	}
	return &graph.CSR{Rows: users, Cols: items, RowPtr: rowPtr, ColIdx: col}, block
}

func TestSpectralPartitionRecoversBlocks(t *testing.T) {
	r, block := plantedBipartite(4, 150, 200, 8, 0.3, 1)
	p, err := SpectralPartition(r, 4, PartitionOptions{Eigen: EigenOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Purity: the share of block users in their block's majority client.
	agree := 0
	for b := 0; b < 4; b++ {
		var count [4]int
		for u, bu := range block {
			if bu == b {
				count[p.UserClient[u]]++
			}
		}
		agree += slices.Max(count[:])
	}
	purity := float64(agree) / 600
	t.Logf("purity %.3f, %d users moved", purity, p.Moved)
	if purity < 0.95 {
		t.Errorf("purity %.3f, want ≥ 0.95 for a planted partition (moved %d users)", purity, p.Moved)
	}
	checkPartition(t, r, p)
}

func TestSpectralPartitionEdgeVariation(t *testing.T) {
	r, _ := plantedBipartite(4, 150, 200, 8, 0.3, 2)
	p, err := SpectralPartition(r, 4, PartitionOptions{EdgeVariation: DefaultEdgeVariation, Eigen: EigenOptions{Seed: 2}})
	if err != nil {
		t.Fatal(err)
	}
	mean := float64(r.NNZ()) / 4
	for c, want := range []float64{1.2, 1.2 - 0.4/3, 0.8 + 0.4/3, 0.8} {
		if got := float64(p.Targets[c]) / mean; math.Abs(got-want) > 0.01 {
			t.Errorf("client %d target %.3f of the mean, want %.3f", c, got, want)
		}
	}
	if p.Moved == 0 {
		t.Error("no user moved although equal blocks had to be spread ±20%")
	}
	checkPartition(t, r, p)
	// Deterministic.
	again, _ := SpectralPartition(r, 4, PartitionOptions{EdgeVariation: DefaultEdgeVariation, Eigen: EigenOptions{Seed: 2}})
	if !slices.Equal(p.UserClient, again.UserClient) {
		t.Error("same options, different partitions")
	}
}

// checkPartition verifies the bookkeeping and that every client is within
// the rebalancing slack of its target.
func checkPartition(t *testing.T, r *graph.CSR, p *Partition) {
	t.Helper()
	edges := make([]int, p.Clients)
	users := make([]int, p.Clients)
	for u, c := range p.UserClient {
		if c < 0 || int(c) >= p.Clients {
			t.Fatalf("user %d in client %d", u, c)
		}
		edges[c] += r.Degree(u)
		users[c]++
	}
	if !slices.Equal(edges, p.Edges) || !slices.Equal(users, p.Users) {
		t.Errorf("counts %v %v, recomputed %v %v", p.Edges, p.Users, edges, users)
	}
	sum := 0
	// Users move whole, so a client can miss its target by the slack plus
	// one user's degree.
	slack := max(1, r.NNZ()/(200*p.Clients))
	for u := 0; u < r.Rows; u++ {
		slack = max(slack, r.NNZ()/(200*p.Clients)+r.Degree(u))
	}
	for c := range edges {
		sum += p.Targets[c]
		if d := edges[c] - p.Targets[c]; d > slack || d < -slack {
			t.Errorf("client %d holds %d interactions, target %d", c, edges[c], p.Targets[c])
		}
	}
	clustered := 0
	for _, e := range p.Clustered {
		clustered += e
	}
	if sum != r.NNZ() || clustered != r.NNZ() {
		t.Errorf("targets sum to %d and clustered edges to %d, want %d", sum, clustered, r.NNZ())
	}
	owner, err := p.InteractionClients(r)
	if err != nil || len(owner) != r.NNZ() {
		t.Fatalf("interaction clients: %v", err)
	}
	for u := 0; u < r.Rows; u++ {
		for k := r.RowPtr[u]; k < r.RowPtr[u+1]; k++ {
			if owner[k] != p.UserClient[u] {
				t.Fatalf("interaction %d of user %d in client %d, user in %d", k, u, owner[k], p.UserClient[u])
			}
		}
	}
}

func TestSpectralPartitionLoneUsersAndSplits(t *testing.T) {
	r, _ := plantedBipartite(3, 60, 80, 6, 0.2, 3)
	p, err := SpectralPartition(r, 3, PartitionOptions{Eigen: EigenOptions{Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Rows
	// The two users of the lone component share a client; the two users
	// without interactions went to clients with the fewest users.
	if p.UserClient[n-4] != p.UserClient[n-3] {
		t.Errorf("a component was split: users %d and %d in clients %d and %d", n-4, n-3, p.UserClient[n-4], p.UserClient[n-3])
	}
	checkPartition(t, r, p)
	test := &graph.CSR{Rows: n, Cols: r.Cols, RowPtr: make([]int, n+1)}
	test.ColIdx = []int32{0}
	for u := n - 1; u < n; u++ {
		test.RowPtr[u+1] = 1
	}
	d := &graph.Interactions{Name: "planted", Users: n, Items: r.Cols, Train: r, Test: test}
	total := 0
	for c := 0; c < p.Clients; c++ {
		cd, err := p.ClientInteractions(d, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := cd.Validate(); err != nil {
			t.Fatal(err)
		}
		if cd.NumTrain() != p.Edges[c] {
			t.Errorf("client %d: %d training interactions, partition says %d", c, cd.NumTrain(), p.Edges[c])
		}
		total += cd.NumTrain() + cd.NumTest()
		for u := 0; u < n; u++ {
			if p.UserClient[u] != int32(c) && (cd.Train.Degree(u) > 0 || cd.Test.Degree(u) > 0) {
				t.Fatalf("client %d holds interactions of user %d of client %d", c, u, p.UserClient[u])
			}
		}
	}
	if total != r.NNZ()+1 {
		t.Errorf("clients hold %d interactions, want %d", total, r.NNZ()+1)
	}
}

func TestSpectralPartitionErrors(t *testing.T) {
	r, _ := plantedBipartite(2, 10, 10, 3, 0, 4)
	for _, c := range []struct {
		clients int
		v       float64
	}{{0, 0}, {1000, 0}, {2, -0.1}, {2, 1}, {2, math.NaN()}} {
		if _, err := SpectralPartition(r, c.clients, PartitionOptions{EdgeVariation: c.v}); err == nil {
			t.Errorf("%d clients, variation %v accepted", c.clients, c.v)
		}
	}
	p, err := SpectralPartition(r, 1, PartitionOptions{})
	if err != nil || p.Edges[0] != r.NNZ() || p.Users[0] != r.Rows {
		t.Errorf("one client: %+v, %v", p, err)
	}
}

// TestClusterQR: rows near three orthogonal directions of a rotated frame
// come back as three clusters.
func TestClusterQR(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	theta := 0.7
	rot := [3][3]float64{{math.Cos(theta), -math.Sin(theta), 0}, {math.Sin(theta), math.Cos(theta), 0}, {0, 0, 1}}
	n, k := 90, 3
	y := make([]float64, n*k)
	truth := make([]int32, n)
	for i := 0; i < n; i++ {
		c := i % 3
		truth[i] = int32(c)
		scale := 0.5 + rng.Float64()
		for a := 0; a < k; a++ {
			y[i*k+a] = scale*rot[a][c] + 0.05*rng.NormFloat64()
		}
	}
	labels, aff, err := clusterQR(y, n, k)
	if err != nil {
		t.Fatal(err)
	}
	// Labels are a permutation of the truth.
	perm := map[int32]int32{}
	for i, l := range labels {
		if p, ok := perm[truth[i]]; ok && p != l {
			t.Fatalf("row %d: label %d, cluster %d already mapped to %d", i, l, truth[i], p)
		}
		perm[truth[i]] = l
		if aff[i*k+int(l)] < aff[i*k+(int(l)+1)%k] {
			t.Fatalf("row %d: assigned to a lower affinity", i)
		}
	}
	if len(perm) != 3 {
		t.Errorf("%d clusters found, want 3", len(perm))
	}
}
