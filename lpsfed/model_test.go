package lpsfed

import (
	"fmt"
	"slices"
	"testing"
)

// blockData draws users who take most items from their community's block
// and holds one item per user out.
func blockData(users, items, blocks int, seed uint64) *Data {
	rng := newRNG(seed)
	d := &Data{Users: users, Items: items, Train: make([][]int32, users), Test: make([][]int32, users)}
	size := items / blocks
	for u := range users {
		seen := map[int32]bool{}
		var order []int32
		for len(order) < 8 {
			i := int32((u%blocks)*size + rng.IntN(size))
			if rng.Float64() < 0.1 {
				i = int32(rng.IntN(items))
			}
			if !seen[i] {
				seen[i] = true
				order = append(order, i)
			}
		}
		d.Train[u] = slices.Sorted(slices.Values(order[:7]))
		d.Test[u] = []int32{order[7]}
	}
	_, deg := d.Degrees()
	for i, g := range deg {
		if g == 0 {
			u := int(i) % users
			d.Test[u] = slices.DeleteFunc(d.Test[u], func(x int32) bool { return x == int32(i) })
			d.Train[u] = slices.Sorted(slices.Values(append(d.Train[u], int32(i))))
		}
	}
	return d
}

func TestTrainingImprovesRanking(t *testing.T) {
	d := blockData(120, 80, 4, 3)
	p, _ := denseEigen(t, d, 12)
	for _, loss := range []string{LossBPR, LossBC} {
		t.Run(loss, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Loss, cfg.Dim, cfg.BatchSize, cfg.LR, cfg.Seed = loss, 16, 128, 5e-3, 1
			m, err := NewModel(d, p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := m.Evaluate()
			m.Train(30)
			after := m.Evaluate()
			// Random ranking finds 20/73 of a user's held-out item; its
			// block alone (20 items, 7 of them trained) holds it 90% of the time.
			if after.Recall < 0.6 || after.Recall < before.Recall+0.2 || after.NDCG <= before.NDCG {
				t.Fatalf("recall %.3f → %.3f, ndcg %.3f → %.3f", before.Recall, after.Recall, before.NDCG, after.NDCG)
			}
			mm, ok := m.MeanMargin()
			if loss == LossBC && (!ok || mm <= 0 || mm > 3.15) || loss == LossBPR && ok {
				t.Fatalf("mean margin %v %v", mm, ok)
			}
		})
	}
}

func TestSharedParams(t *testing.T) {
	d := blockData(20, 16, 2, 1)
	p, _ := denseEigen(t, d, 5)
	for _, tc := range []struct{ pool, pred int }{{0, 0}, {4, 3}} {
		t.Run(fmt.Sprintf("pool=%d,pred=%d", tc.pool, tc.pred), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dim, cfg.PoolHidden, cfg.PredHidden = 6, tc.pool, tc.pred
			a, _ := NewModel(d, p, cfg)
			cfg.Seed = 99 // other local randomness, same shared seed
			b, _ := NewModel(d, p, cfg)
			a.InitShared(7)
			b.InitShared(7)
			if fmt.Sprint(a.Shared()) != fmt.Sprint(b.Shared()) || a.SchemaHash() != b.SchemaHash() {
				t.Fatal("clients initialised from one seed differ")
			}
			hPool, hPred := 6, 1 // first-layer widths without hidden layers
			if tc.pool > 0 {
				hPool = tc.pool
			}
			if tc.pred > 0 {
				hPred = tc.pred
			}
			// (L+1)·d×h + h pooling, 3d×h + h predictive, then the second layers.
			want := 3*6*hPool + hPool + 3*6*hPred + hPred
			if tc.pool > 0 {
				want += tc.pool*6 + 6
			}
			if tc.pred > 0 {
				want += tc.pred + 1
			}
			if a.NumShared() != want || len(a.Shared()) != want {
				t.Fatalf("%d shared values, want %d", a.NumShared(), want)
			}
			v := a.Shared()
			for i := range v {
				v[i] = float32(i)
			}
			if err := b.SetShared(v); err != nil || fmt.Sprint(b.Shared()) != fmt.Sprint(v) {
				t.Fatalf("round trip: %v", err)
			}
			if err := b.SetShared(v[1:]); err == nil {
				t.Fatal("short vector accepted")
			}
		})
	}
}

func TestNewModelRejects(t *testing.T) {
	d := blockData(10, 8, 2, 1)
	p, _ := denseEigen(t, d, 4)
	bad := DefaultConfig()
	bad.Loss = "mse"
	short := *p
	short.Rows--
	for _, tc := range []struct {
		name string
		cfg  Config
		d    *Data
	}{
		{"loss", bad, d},
		{"eigenvectors", DefaultConfig(), &Data{Users: 1, Items: 1, Train: [][]int32{{0}}}},
		{"unsorted", DefaultConfig(), &Data{Users: 10, Items: 8, Train: append([][]int32{{3, 1}}, d.Train[1:]...)}},
	} {
		if _, err := NewModel(tc.d, p, tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
