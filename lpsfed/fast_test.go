package lpsfed

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"graphfed/gnn"
)

// The batch and parallel paths against the straightforward one-pair-at-a-
// time code they replace: results must be equal bit for bit, for any
// number of CPUs.

// withProcs runs f with GOMAXPROCS set to p.
func withProcs(p int, f func()) {
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	f()
}

// bitsEqual reports the first index where a and b differ in their bits.
func bitsEqual[T float32 | float64](a, b []T) (int, bool) {
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return i, false
		}
	}
	return -1, len(a) == len(b)
}

// randomPairs draws n (user row, item row) pairs of an s-row z whose
// first users rows are users, runs of up to 4 pairs sharing a user as a
// positive's negatives do, and score gradients of which about a tenth
// are zero.
func randomPairs(seed uint64, users, s, n int) (u, i []int32, ds []float64) {
	rng := newRNG(seed)
	for len(u) < n {
		uu := int32(rng.IntN(users))
		for range 1 + rng.IntN(4) {
			u = append(u, uu)
			i = append(i, int32(users+rng.IntN(s-users)))
			g := rng.NormFloat64() * 1e-3
			if rng.IntN(10) == 0 {
				g = 0
			}
			ds = append(ds, g)
		}
	}
	return u[:n], i[:n], ds[:n]
}

func TestPredictorAffineMatchesPairs(t *testing.T) {
	for _, tc := range []struct {
		d, users, rows, pairs, procs int
	}{
		{d: 4, users: 5, rows: 12, pairs: 7, procs: 1},    // serial, tails of 4 pairs
		{d: 7, users: 30, rows: 70, pairs: 333, procs: 2}, // columns not a multiple of 16
		{d: 64, users: 400, rows: 1500, pairs: 20000, procs: 2},
		{d: 64, users: 400, rows: 1500, pairs: 20001, procs: 5},
		{d: 40, users: 300, rows: 900, pairs: 9999, procs: 3},
	} {
		t.Run(fmt.Sprintf("d%d-pairs%d-procs%d", tc.d, tc.pairs, tc.procs), func(t *testing.T) {
			rng := newRNG(uint64(tc.pairs))
			z := gnn.New(tc.rows, tc.d)
			normalFill(z, 0.5, rng)
			z.Data[3] = 0 // a zero product z_uc·z_ic, which the sums skip
			u, i, ds := randomPairs(uint64(tc.d), tc.users, tc.rows, tc.pairs)
			type result struct {
				s      []float64
				dz, gw []float32
			}
			run := func(fast bool) result {
				p := newPredictor(tc.d, 0)
				p.initParams(newRNG(4))
				p.B1.W.Data[0] = 0.1
				p.prepare(z)
				r := result{s: make([]float64, len(u)), dz: make([]float32, len(z.Data))}
				dz := gnn.NewFrom(z.Rows, z.Cols, r.dz)
				normalFill(dz, 1e-3, newRNG(5)) // backward adds to dz
				p.dua, p.dvb = gnn.New(z.Rows, 1), gnn.New(z.Rows, 1)
				withProcs(tc.procs, func() {
					if fast {
						p.forwardAffine(z, u, i, r.s)
						p.backwardAffine(z, u, i, ds, dz)
						p.backwardMapsAffine(z, dz)
					} else {
						p.forwardPairs(z, u, i, r.s)
						p.backwardPairs(z, u, i, ds, dz)
						p.backwardMaps(z, dz)
					}
				})
				r.gw = append(append([]float32(nil), p.W1.G.Data...), p.B1.G.Data...)
				return r
			}
			want, got := run(false), run(true)
			if k, ok := bitsEqual(got.s, want.s); !ok {
				t.Fatalf("score %d: %v, one pair at a time %v", k, got.s[k], want.s[k])
			}
			if k, ok := bitsEqual(got.dz, want.dz); !ok {
				t.Fatalf("dz[%d]: %v, one pair at a time %v", k, got.dz[k], want.dz[k])
			}
			if k, ok := bitsEqual(got.gw, want.gw); !ok {
				t.Fatalf("weight gradient %d: %v, one pair at a time %v", k, got.gw[k], want.gw[k])
			}
		})
	}
}

func TestPopularityBatchMatchesPairs(t *testing.T) {
	for _, tc := range []struct {
		users, items, dim, pairs, procs int
	}{
		{users: 10, items: 12, dim: 4, pairs: 9, procs: 1},
		{users: 200, items: 300, dim: 24, pairs: 5000, procs: 2},
		{users: 500, items: 900, dim: 64, pairs: 30000, procs: 3},
	} {
		t.Run(fmt.Sprintf("dim%d-pairs%d-procs%d", tc.dim, tc.pairs, tc.procs), func(t *testing.T) {
			d := randomData(newRNG(2), tc.users, tc.items, min(30, tc.items), false)
			u, i, g := randomPairs(3, tc.users, tc.users+tc.items, tc.pairs)
			for k := range i {
				i[k] -= int32(tc.users) // item ids, not rows
			}
			ref := newPopularity(d, tc.dim, newRNG(6), 0.1)
			fast := newPopularity(d, tc.dim, newRNG(6), 0.1)
			want, got := make([]float64, len(u)), make([]float64, len(u))
			for k := range u {
				want[k] = ref.cos(u[k], i[k])
				ref.backward(u[k], i[k], g[k])
			}
			withProcs(tc.procs, func() {
				fast.batchCos(u, i, got)
				fast.backwardBatch(u, i, g)
			})
			if k, ok := bitsEqual(got, want); !ok {
				t.Fatalf("cos %d: %v, per pair %v", k, got[k], want[k])
			}
			for q, p := range fast.params() {
				if k, ok := bitsEqual(p.G.Data, ref.params()[q].G.Data); !ok {
					t.Fatalf("%s gradient %d: %v, per pair %v", p.Name, k, p.G.Data[k], ref.params()[q].G.Data[k])
				}
			}
		})
	}
}

// TestTrainingIndependentOfCPUCount trains the same model with 1, 2 and 5
// CPUs: every parameter and the metrics must agree bit for bit (the
// parallel loops never split a sum across goroutines).
func TestTrainingIndependentOfCPUCount(t *testing.T) {
	d := randomData(newRNG(3), 400, 900, 30, true)
	p := gnn.New(d.Nodes(), 16)
	normalFill(p, 0.03, newRNG(4))
	for _, loss := range []string{LossBC, LossBPR} {
		t.Run(loss, func(t *testing.T) {
			var ref []float32
			var refScores Scores
			for _, procs := range []int{1, 2, 5} {
				cfg := DefaultConfig()
				cfg.Loss, cfg.BatchSize, cfg.LR, cfg.Seed = loss, 3000, 5e-3, 1
				m, err := NewModel(d, p, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var s Scores
				withProcs(procs, func() {
					m.Train(2)
					s = m.Evaluate()
				})
				var all []float32
				for _, q := range m.all {
					all = append(all, q.W.Data...)
				}
				if ref == nil {
					ref, refScores = all, s
					continue
				}
				if k, ok := bitsEqual(all, ref); !ok {
					t.Fatalf("%d CPUs: parameter %d is %v, with 1 CPU %v", procs, k, all[k], ref[k])
				}
				if s != refScores {
					t.Fatalf("%d CPUs: scores %+v, with 1 CPU %+v", procs, s, refScores)
				}
			}
		})
	}
}

// TestTopKInsert checks the running top K against sorting, with ties
// (the lower item first) and fewer candidates than K.
func TestTopKInsert(t *testing.T) {
	rng := newRNG(9)
	for _, tc := range []struct{ n, k, levels int }{{3, 5, 10}, {50, 5, 4}, {400, 20, 1000}, {400, 20, 3}} {
		var st topK
		type cand struct {
			i int32
			s float32
		}
		var all []cand
		for i := range tc.n {
			s := float32(rng.IntN(tc.levels))
			all = append(all, cand{int32(i), s})
			st.insert(int32(i), s, tc.k)
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
		if !slices.Equal(st.items, want) {
			t.Fatalf("n=%d k=%d levels=%d: top %v, sorted %v", tc.n, tc.k, tc.levels, st.items, want)
		}
	}
}
