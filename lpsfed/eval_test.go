package lpsfed

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"graphfed/gnn"
)

// TestEvaluateMatchesBruteForce scores every (user, item) pair through the
// predictor's pair path and recomputes Recall@K and NDCG@K by sorting.
func TestEvaluateMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct{ pred, users, items int }{
		{0, 12, 15}, {3, 12, 15},
		// More users than a block and items than a tile, split across
		// goroutines; with 2 of 3 test items held out, many hits.
		{0, 2*evalBlock + 7, evalTile + 50}, {2, evalBlock + 1, evalTile + 1},
	} {
		pred := tc.pred
		t.Run(fmt.Sprintf("pred=%d-users=%d", pred, tc.users), func(t *testing.T) {
			rng := newRNG(5)
			d := randomData(rng, tc.users, tc.items, 5, true)
			p := gnn.New(d.Nodes(), 6)
			if tc.users < 100 {
				p, _ = denseEigen(t, d, 6)
			} else {
				normalFill(p, 0.05, rng) // the ranking does not need true eigenvectors
			}
			cfg := DefaultConfig()
			cfg.Dim, cfg.PredHidden, cfg.TopK, cfg.Loss, cfg.InitStd = 4, pred, 5, LossBPR, 0.5
			m, err := NewModel(d, p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m.InitShared(9)
			got := m.Evaluate()

			z := m.enc.forward(nil).Clone()
			m.pred.prepare(z)
			var recall, ndcg float64
			users := 0
			for u := range d.Users {
				if len(d.Test[u]) == 0 {
					continue
				}
				users++
				type cand struct {
					i int32
					s float64
				}
				var cs []cand
				s := make([]float64, 1)
				for i := range d.Items {
					if hasItem(d.Train[u], int32(i)) {
						continue
					}
					m.pred.forward(z, []int32{int32(u)}, []int32{int32(d.Users + i)}, s)
					cs = append(cs, cand{int32(i), s[0]})
				}
				sort.SliceStable(cs, func(a, b int) bool { return cs[a].s > cs[b].s })
				hits, dcg, idcg := 0, 0.0, 0.0
				for r := 0; r < cfg.TopK && r < len(cs); r++ {
					if hasItem(d.Test[u], cs[r].i) {
						hits++
						dcg += 1 / math.Log2(float64(r)+2)
					}
				}
				for r := range min(cfg.TopK, len(d.Test[u])) {
					idcg += 1 / math.Log2(float64(r)+2)
				}
				recall += float64(hits) / float64(len(d.Test[u]))
				ndcg += dcg / idcg
			}
			if got.Users != users || got.TestUsers != users {
				t.Fatalf("evaluated %d of %d users, want %d", got.Users, got.TestUsers, users)
			}
			recall /= float64(users)
			ndcg /= float64(users)
			if math.Abs(got.Recall-recall) > 1e-9 || math.Abs(got.NDCG-ndcg) > 1e-9 {
				t.Fatalf("recall %v ndcg %v, brute force %v %v", got.Recall, got.NDCG, recall, ndcg)
			}
		})
	}
}

func TestEvalUsersSample(t *testing.T) {
	rng := newRNG(8)
	d := randomData(rng, 40, 20, 4, true)
	all := evalUsers(d, 0, 1)
	s1, s2 := evalUsers(d, 5, 1), evalUsers(d, 5, 1)
	if len(s1) != 5 || fmt.Sprint(s1) != fmt.Sprint(s2) || len(all) <= 5 {
		t.Fatalf("sample %v %v of %d", s1, s2, len(all))
	}
}
