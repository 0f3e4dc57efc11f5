package amllearner

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// randRelease returns n rows of L layers of H as the store receives them
// scaled by 1/√L: each layer a random direction of norm 1/√L, plus σ noise
// a coordinate.
func randRelease(rng *rand.Rand, n, L, H int, sigma float64) []float32 {
	rows := make([]float32, 0, n*L*H)
	h := make([]float32, L*H)
	for range n {
		for i := range h {
			h[i] = float32(rng.NormFloat64())
		}
		for k := range L {
			blk := h[k*H : (k+1)*H]
			n := norm32(blk) * math.Sqrt(float64(L))
			for _, x := range blk {
				rows = append(rows, float32(float64(x)/n))
			}
		}
	}
	for i := range rows {
		rows[i] += float32(sigma * rng.NormFloat64())
	}
	return rows
}

// The 8-bit store errs by at most max|x|/254 a coordinate, and on a
// layer by ~0.5% of its norm (at most 1.5%), noisy or not; a stored row is
// replaced, not appended, and zero or non-finite layers come back zero.
func TestRemoteStoreQuantization(t *testing.T) {
	const L, H, n = 2, 32, 500
	mul := float32(math.Sqrt(L))
	for _, tc := range []struct {
		name        string
		sigma       float64
		maxRelNorm  float64 // worst relative error of a layer's norm
		meanRelNorm float64
	}{
		{"noiseless", 0, 0.015, 0.007},
		{"σ0=0.1", 0.1, 0.015, 0.007},
		{"σ0=1 (ε≈8)", 1, 0.015, 0.007},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.sigma*100)))
			rows := randRelease(rng, n, L, H, tc.sigma)
			st := newRemoteStore(n, uniformLayout(L, H-1)) // blocks of H stored values
			for a := range n {
				st.put(int32(a), rows[a*L*H:(a+1)*L*H], mul)
			}
			if st.len() != n {
				t.Fatalf("%d rows stored, want %d", st.len(), n)
			}
			got := make([]float32, H)
			var worst, sum float64
			for a := range n {
				for k := range L {
					st.layer(int32(a), k, got, 1)
					want := rows[a*L*H+k*H : a*L*H+(k+1)*H]
					var m, errSS, wantSS float64
					for _, x := range want {
						m = max(m, math.Abs(float64(x*mul)))
					}
					for j, x := range want {
						d := float64(got[j]) - float64(x*mul)
						if math.Abs(d) > m/254*(1+1e-5)+1e-7 {
							t.Fatalf("row %d layer %d coordinate %d: %v for %v, beyond max|x|/254 = %v", a, k, j, got[j], x*mul, m/254)
						}
						errSS += d * d
						wantSS += float64(x*mul) * float64(x*mul)
					}
					rel := math.Sqrt(errSS / wantSS)
					worst, sum = max(worst, rel), sum+rel
				}
			}
			if mean := sum / (n * L); worst > tc.maxRelNorm || mean > tc.meanRelNorm {
				t.Fatalf("relative error of a layer: worst %.4f (bound %v), mean %.4f (bound %v)", worst, tc.maxRelNorm, mean, tc.meanRelNorm)
			}
		})
	}
	st := newRemoteStore(3, uniformLayout(L, H-1)) // blocks of H stored values
	row := randRelease(rand.New(rand.NewPCG(2, 2)), 1, L, H, 0)
	st.put(1, row, 1)
	zero := make([]float32, L*H)
	zero[H] = float32(math.Inf(1)) // layer 0 zero, layer 1 not finite
	st.put(1, zero, 1)
	if st.len() != 1 || st.has(0) || !st.has(1) {
		t.Fatalf("store of %d rows (has 0: %v, 1: %v), want account 1's only", st.len(), st.has(0), st.has(1))
	}
	got := make([]float32, H)
	for k := range L {
		st.layer(1, k, got, 1)
		for _, x := range got {
			if x != 0 {
				t.Fatalf("layer %d of a zero / non-finite row reads %v", k, got)
			}
		}
	}
}

// BenchmarkRemoteStoreBytes reports the heap a bank holds for 100k
// received rows of the 5M run's width (L = 2, H = 32): float32 rows in a
// map, as before, against the 8-bit store.
func BenchmarkRemoteStoreBytes(b *testing.B) {
	const L, H, n = 2, 32, 100_000
	rows := randRelease(rand.New(rand.NewPCG(3, 3)), 1000, L, H, 1)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for range b.N {
		before := heap()
		m := map[int32][]float32{}
		for a := range int32(n) {
			r := int(a) % 1000
			m[a] = append([]float32(nil), rows[r*L*H:(r+1)*L*H]...)
		}
		mapBytes := heap() - before
		runtime.KeepAlive(m)
		m = nil
		before = heap()
		st := newRemoteStore(n, uniformLayout(L, H-1)) // blocks of H stored values
		for a := range int32(n) {
			r := int(a) % 1000
			st.put(a, rows[r*L*H:(r+1)*L*H], 1)
		}
		storeBytes := heap() - before
		runtime.KeepAlive(st)
		b.ReportMetric(float64(mapBytes)/n, "map-B/row")
		b.ReportMetric(float64(storeBytes)/n, "store-B/row")
	}
}
