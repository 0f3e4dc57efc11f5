package edgegnn

// Test helpers shared with package gnn's tests (helpers_test.go there),
// copied: a package's test files cannot import another's.

import (
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/gnn"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randTensor returns an r×c tensor with entries uniform in [-1, 1).
func randTensor(rng *rand.Rand, r, c int) *gnn.Tensor {
	t := gnn.New(r, c)
	for i := range t.Data {
		t.Data[i] = float32(2*rng.Float64() - 1)
	}
	return t
}

// sumProduct returns Σ out⊙r in float64: a scalar test loss whose gradient
// w.r.t. out is r.
func sumProduct(out, r *gnn.Tensor) float64 {
	var s float64
	for i, v := range out.Data {
		s += float64(v) * float64(r.Data[i])
	}
	return s
}

// Finite-difference settings. Forward passes run in float32 and only the
// loss is accumulated in float64, so central differences carry rounding
// noise of about 1e-7·Σ|terms|/h; the tolerances below leave an order of
// magnitude of room over that.
const (
	fdStep = 1e-2 // perturbation for piecewise-linear and smooth functions
	fdRTol = 1e-2 // relative tolerance
	fdATol = 1e-3 // absolute floor, for gradients near zero
	fdMax  = 48   // elements checked per tensor (a seeded sample beyond that)
)

// fdSetup checks that vals and grad match, copies grad (loss may overwrite
// it) and picks the elements to check: all of them, or fdMax at random
// (seeded by the length, so a failure reproduces).
func fdSetup(tb testing.TB, name string, vals, grad []float32) ([]float32, []int) {
	tb.Helper()
	if len(vals) != len(grad) {
		tb.Fatalf("%s: %d values, %d gradients", name, len(vals), len(grad))
	}
	grad = append([]float32(nil), grad...)
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	if len(idx) > fdMax {
		rng := newRNG(uint64(len(vals)))
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		idx = idx[:fdMax]
	}
	return grad, idx
}

// checkGrad compares grad (the analytic gradient of loss w.r.t. vals) with
// central differences (loss(v+h) - loss(v-h))/2h element by element:
// |num - ana| ≤ fdRTol·max(|num|, |ana|) + fdATol. loss must recompute from
// scratch. vals is restored.
func checkGrad(tb testing.TB, name string, vals, grad []float32, loss func() float64, h float64) {
	tb.Helper()
	grad, idx := fdSetup(tb, name, vals, grad)
	for _, i := range idx {
		orig := vals[i]
		vals[i] = orig + float32(h)
		lp := loss()
		vals[i] = orig - float32(h)
		lm := loss()
		vals[i] = orig
		// Divide by the step actually taken in float32.
		step := float64(orig+float32(h)) - float64(orig-float32(h))
		num := (lp - lm) / step
		ana := float64(grad[i])
		if d := math.Abs(num - ana); d > fdRTol*math.Max(math.Abs(num), math.Abs(ana))+fdATol {
			tb.Errorf("%s[%d]: analytic %.6g, numeric %.6g (diff %.3g)", name, i, ana, num, d)
		}
	}
}
