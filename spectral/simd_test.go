package spectral

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestVectorKernelsMatchGo checks the dispatching kernels (the AVX2/FMA
// ones where the CPU has them) against the Go reference loops, for every
// tail length.
func TestVectorKernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 13, 16, 37, 2048, 2051} {
		v0, v1, w0, w1, w2, w3 := vec(n), vec(n), vec(n), vec(n), vec(n), vec(n)
		got, want := dot2x4(v0, v1, w0, w1, w2, w3), dot2x4Go(v0, v1, w0, w1, w2, w3)
		for q := range got {
			if math.Abs(got[q]-want[q]) > 1e-12*(1+math.Sqrt(float64(n))) {
				t.Errorf("n=%d dot %d: %v, Go %v", n, q, got[q], want[q])
			}
		}
		var h [8]float64
		for q := range h {
			h[q] = rng.NormFloat64()
		}
		o0, o1 := vec(n), vec(n)
		g0, g1 := append([]float64(nil), o0...), append([]float64(nil), o1...)
		axpy4x2(o0, o1, &h, w0, w1, w2, w3)
		axpy4x2Go(g0, g1, &h, w0, w1, w2, w3)
		for i := range o0 {
			if math.Abs(o0[i]-g0[i]) > 1e-13 || math.Abs(o1[i]-g1[i]) > 1e-13 {
				t.Fatalf("n=%d axpy entry %d: %v %v, Go %v %v", n, i, o0[i], o1[i], g0[i], g1[i])
			}
		}
	}
	t.Logf("vector kernels in use: %v", vectorKernels())
}
