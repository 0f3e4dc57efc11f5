package lightgcn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"graphfed/gnn"
	"graphfed/graph"
)

// randomInteractions draws users × items with about deg training and
// testDeg test items per user, disjoint and sorted; some users have no
// test items.
func randomInteractions(rng *rand.Rand, users, items, deg, testDeg int) *graph.Interactions {
	train := &graph.CSR{Rows: users, Cols: items, RowPtr: []int{0}}
	test := &graph.CSR{Rows: users, Cols: items, RowPtr: []int{0}}
	for range users {
		perm := rng.Perm(items)
		nt := 1 + rng.IntN(deg)
		ne := rng.IntN(testDeg + 1)
		tr, te := perm[:nt], perm[nt:nt+ne]
		slices.Sort(tr)
		slices.Sort(te)
		for _, i := range tr {
			train.ColIdx = append(train.ColIdx, int32(i))
		}
		for _, i := range te {
			test.ColIdx = append(test.ColIdx, int32(i))
		}
		train.RowPtr = append(train.RowPtr, len(train.ColIdx))
		test.RowPtr = append(test.RowPtr, len(test.ColIdx))
	}
	return &graph.Interactions{Name: "random", Users: users, Items: items, Train: train, Test: test}
}

// TestEvaluateMatchesBruteForce recomputes Recall@K and NDCG@K by sorting
// every user's scores of its non-training items, on graphs smaller and
// larger than a block of users and a tile of items.
func TestEvaluateMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct{ users, items, k, layers int }{
		{7, 9, 3, 0}, {12, 15, 5, 3}, {2*evalBlock + 7, evalTile + 50, 20, 2},
	} {
		t.Run(fmt.Sprintf("users=%d-items=%d-k=%d", tc.users, tc.items, tc.k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.users), 3))
			d := randomInteractions(rng, tc.users, tc.items, 6, 4)
			cfg := DefaultConfig()
			cfg.Dim, cfg.Layers, cfg.TopK = 5, tc.layers, tc.k
			m, err := New(d.Train, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Evaluate(d.Test)
			if err != nil {
				t.Fatal(err)
			}
			fin := gnn.New(m.e0.Rows, cfg.Dim)
			m.prop.forwardAll(m.e0, fin)
			var recall, ndcg float64
			users := 0
			for u := range d.Users {
				test, _ := d.Test.Row(u)
				if len(test) == 0 {
					continue
				}
				users++
				train, _ := d.Train.Row(u)
				type cand struct {
					i int32
					s float32
				}
				var cs []cand
				for i := range d.Items {
					if slices.Contains(train, int32(i)) {
						continue
					}
					var s float32
					for c, v := range fin.Row(u) {
						s += v * fin.At(d.Users+i, c)
					}
					cs = append(cs, cand{int32(i), s})
				}
				sort.SliceStable(cs, func(a, b int) bool { return cs[a].s > cs[b].s })
				hits, dcg, idcg := 0, 0.0, 0.0
				for r := 0; r < tc.k && r < len(cs); r++ {
					if slices.Contains(test, cs[r].i) {
						hits++
						dcg += 1 / math.Log2(float64(r)+2)
					}
				}
				for r := range min(tc.k, len(test)) {
					idcg += 1 / math.Log2(float64(r)+2)
				}
				recall += float64(hits) / float64(len(test))
				ndcg += dcg / idcg
			}
			recall /= float64(users)
			ndcg /= float64(users)
			if got.Users != users {
				t.Fatalf("evaluated %d users, want %d", got.Users, users)
			}
			// Random float scores have no near-ties, so the kernels' other
			// summation order ranks the same items.
			if math.Abs(got.Recall-recall) > 1e-12 || math.Abs(got.NDCG-ndcg) > 1e-12 {
				t.Fatalf("recall %v ndcg %v, brute force %v %v", got.Recall, got.NDCG, recall, ndcg)
			}
			t.Logf("recall %v ndcg %v, brute force %v %v", got.Recall, got.NDCG, recall, ndcg)
		})
	}
}

// TestForwardBatchMatchesAll checks that the step's forward (last layer
// only at the batch's rows) gives the full propagation's rows.
func TestForwardBatchMatchesAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	d := randomInteractions(rng, 60, 80, 9, 0)
	for _, layers := range []int{0, 1, 2, 3, 4} {
		cfg := DefaultConfig()
		cfg.Dim, cfg.Layers = 64, layers
		m, err := New(d.Train, cfg)
		if err != nil {
			t.Fatal(err)
		}
		nodes := []int32{0, 5, 59, 60, 61, 139}
		part := gnn.New(len(nodes), cfg.Dim)
		m.prop.forwardBatch(m.e0, nodes, part)
		all := gnn.New(m.e0.Rows, cfg.Dim)
		m.prop.forwardAll(m.e0, all)
		for j, s := range nodes {
			for c, v := range part.Row(j) {
				if w := all.At(int(s), c); math.Abs(float64(v-w)) > 1e-6 {
					t.Fatalf("layers %d node %d dim %d: batch forward %v, full %v", layers, s, c, v, w)
				}
			}
		}
	}
}

// TestEvaluateShapeError checks that test interactions of another shape
// are an error, not a panic.
func TestEvaluateShapeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := randomInteractions(rng, 10, 12, 3, 2)
	m, err := New(d.Train, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	other := randomInteractions(rng, 10, 13, 3, 2)
	if _, err := m.Evaluate(other.Test); err == nil {
		t.Fatal("a 10×13 test set evaluated against a 10×12 model")
	}
}
