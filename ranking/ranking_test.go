package ranking

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopKInsert checks the running top K against a stable sort, with
// ties (the lower item first) and fewer candidates than K.
func TestTopKInsert(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct{ n, k, levels int }{{3, 5, 10}, {50, 5, 4}, {400, 20, 1000}, {400, 20, 3}} {
		var st TopK
		type cand struct {
			i int32
			s float32
		}
		var all []cand
		for i := range tc.n {
			s := float32(rng.IntN(tc.levels))
			all = append(all, cand{int32(i), s})
			st.Insert(int32(i), s, tc.k)
		}
		slices.SortStableFunc(all, func(a, b cand) int {
			switch {
			case a.s > b.s:
				return -1
			case a.s < b.s:
				return 1
			}
			return 0
		})
		var want []int32
		for _, c := range all[:min(tc.k, len(all))] {
			want = append(want, c.i)
		}
		if !slices.Equal(st.Items(), want) {
			t.Fatalf("n=%d k=%d levels=%d: top %v, sorted %v", tc.n, tc.k, tc.levels, st.Items(), want)
		}
	}
}

// TestBlockMatchesSort ranks random scores in tiles of several sizes and
// compares every user's top K with sorting its non-training items, and
// the metrics with their definitions.
func TestBlockMatchesSort(t *testing.T) {
	for _, tc := range []struct{ users, items, tile, k int }{{1, 5, 5, 3}, {4, 30, 7, 5}, {9, 200, 64, 20}, {3, 10, 3, 20}} {
		t.Run(fmt.Sprintf("%dx%d-tile%d-k%d", tc.users, tc.items, tc.tile, tc.k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.items), 1))
			scores := make([]float32, tc.items*tc.users) // item-major
			for i := range scores {
				scores[i] = float32(rng.IntN(50)) // ties
			}
			train := make([][]int32, tc.users)
			for j := range train {
				for i := range tc.items {
					if rng.IntN(4) == 0 {
						train[j] = append(train[j], int32(i))
					}
				}
			}
			var b Block
			b.Reset(train, tc.k)
			for lo := 0; lo < tc.items; lo += tc.tile {
				hi := min(lo+tc.tile, tc.items)
				b.Tile(scores[lo*tc.users:hi*tc.users], lo)
			}
			for j := range tc.users {
				var cand []int32
				for i := range tc.items {
					if !slices.Contains(train[j], int32(i)) {
						cand = append(cand, int32(i))
					}
				}
				slices.SortStableFunc(cand, func(a, c int32) int {
					sa, sc := scores[int(a)*tc.users+j], scores[int(c)*tc.users+j]
					switch {
					case sa > sc:
						return -1
					case sa < sc:
						return 1
					}
					return 0
				})
				want := cand[:min(tc.k, len(cand))]
				if !slices.Equal(b.Top(j), want) {
					t.Fatalf("user %d: top %v, sorted %v", j, b.Top(j), want)
				}
			}
		})
	}
}

// TestMetrics checks Recall@K and NDCG@K on hand-computed lists.
func TestMetrics(t *testing.T) {
	l := func(r int) float64 { return 1 / math.Log2(float64(r)+2) }
	for _, tc := range []struct {
		name         string
		top, test    []int32
		k            int
		recall, ndcg float64
	}{
		{"all hits", []int32{3, 1}, []int32{1, 3}, 2, 1, 1},
		{"second only", []int32{5, 1, 7}, []int32{1, 2}, 3, 0.5, l(1) / (l(0) + l(1))},
		{"more test than k", []int32{2, 9}, []int32{2, 3, 4}, 2, 1.0 / 3, l(0) / (l(0) + l(1))},
		{"no hits", []int32{8}, []int32{1}, 1, 0, 0},
		{"no test", []int32{8}, nil, 1, 0, 0},
	} {
		r, n := Metrics(tc.top, tc.test, tc.k)
		if math.Abs(r-tc.recall) > 1e-12 || math.Abs(n-tc.ndcg) > 1e-12 {
			t.Errorf("%s: recall %v ndcg %v, want %v %v", tc.name, r, n, tc.recall, tc.ndcg)
		}
	}
}
