package amllearner

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every bank derives the same bases, each with orthonormal columns, and a
// clean narrow release decodes and lifts to the estimate's projection on
// the basis (B·Bᵀ·h in units of the sender's mean norm), for several
// widths.
func TestNarrowReleaseRoundTrip(t *testing.T) {
	const L, H = 2, 16
	for _, r := range []int{1, 2, 4, 8} {
		rng := rand.New(rand.NewPCG(7, uint64(r)))
		for k := range L {
			b, again := releaseBasis(H, r, k), releaseBasis(H, r, k)
			for i := range b.Data {
				if b.Data[i] != again.Data[i] {
					t.Fatalf("r=%d layer %d: basis differs between two derivations", r, k)
				}
			}
			for p := range r {
				for q := range r {
					var dot float64
					for j := range H {
						dot += float64(b.Data[j*r+p] * b.Data[j*r+q])
					}
					want := 0.0
					if p == q {
						want = 1
					}
					if math.Abs(dot-want) > 1e-5 {
						t.Fatalf("r=%d layer %d: columns %d·%d = %v, want %v", r, k, p, q, dot, want)
					}
				}
			}
		}
		l := &Learner{cfg: Config{Hidden: H, ReleaseDims: r}}
		for k := range L {
			l.basis = append(l.basis, releaseBasis(H, r, k))
		}
		h := make([]float32, L*H)
		for i := range h {
			h[i] = float32(rng.NormFloat64())
		}
		scale := []float64{3, 5}
		row := packEstimate(nil, l.releaseEstimate(h, L), scale, uniformLayout(L, r))
		if len(row) != L*(r+1) {
			t.Fatalf("r=%d: release of %d values, want %d", r, len(row), L*(r+1))
		}
		if n := norm32(row); math.Abs(n-1) > 1e-5 {
			t.Fatalf("r=%d: release norm %v, want 1", r, n)
		}
		c, got, want := make([]float32, r), make([]float32, H), make([]float32, H)
		for k := range L {
			decodeLayer(c, row[k*(r+1):(k+1)*(r+1)], 1, L, 1)
			lift(got, l.basis[k], c)
			pc := make([]float32, r)
			project(pc, l.basis[k], h[k*H:(k+1)*H])
			lift(want, l.basis[k], pc)
			for j := range want {
				if d := math.Abs(float64(got[j]) - float64(want[j])/scale[k]); d > 1e-4 {
					t.Fatalf("r=%d layer %d coordinate %d: %v, want %v", r, k, j, got[j], float64(want[j])/scale[k])
				}
			}
		}
	}
}
