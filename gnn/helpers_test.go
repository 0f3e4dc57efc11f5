package gnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/graph"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randTensor returns an r×c tensor with entries uniform in [-1, 1).
func randTensor(rng *rand.Rand, r, c int) *Tensor {
	t := New(r, c)
	for i := range t.Data {
		t.Data[i] = float32(2*rng.Float64() - 1)
	}
	return t
}

// randCSR returns an r×c sparse matrix in which each entry is stored with
// probability density, with values in [0.1, 1.1) (or nil Val when ones is
// set). Some rows come out empty.
func randCSR(rng *rand.Rand, r, c int, density float64, ones bool) *graph.CSR {
	m := &graph.CSR{Rows: r, Cols: c, RowPtr: make([]int, r+1)}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if rng.Float64() < density {
				m.ColIdx = append(m.ColIdx, int32(j))
				if !ones {
					m.Val = append(m.Val, float32(0.1+rng.Float64()))
				}
			}
		}
		m.RowPtr[i+1] = len(m.ColIdx)
	}
	if !ones && m.Val == nil {
		m.Val = []float32{}
	}
	return m
}

// randGraph returns a symmetric n-node adjacency without self loops with
// about deg neighbours per node; node n-1 is always isolated.
func randGraph(tb testing.TB, rng *rand.Rand, n int, deg float64) *graph.CSR {
	tb.Helper()
	var edges []graph.Edge
	for u := 0; u < n-1; u++ {
		for v := u + 1; v < n-1; v++ {
			if rng.Float64() < deg/float64(n) {
				edges = append(edges, graph.Edge{U: int32(u), V: int32(v)})
			}
		}
	}
	a, err := graph.FromEdges(n, edges, true)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// dense returns m as a float64 matrix.
func dense(m *graph.CSR) [][]float64 {
	d := make([][]float64, m.Rows)
	for i := range d {
		d[i] = make([]float64, m.Cols)
		cols, vals := m.Row(i)
		for k, c := range cols {
			v := 1.0
			if vals != nil {
				v = float64(vals[k])
			}
			d[i][c] += v
		}
	}
	return d
}

// rows64 returns t as a float64 matrix.
func rows64(t *Tensor) [][]float64 {
	d := make([][]float64, t.Rows)
	for i := range d {
		d[i] = make([]float64, t.Cols)
		for j := range d[i] {
			d[i][j] = float64(t.At(i, j))
		}
	}
	return d
}

func transpose64(a [][]float64, cols int) [][]float64 {
	t := make([][]float64, cols)
	for j := range t {
		t[j] = make([]float64, len(a))
		for i := range a {
			t[j][i] = a[i][j]
		}
	}
	return t
}

// mul64 is the textbook product of float64 matrices a (m×k) and b (k×n).
func mul64(a, b [][]float64, k, n int) [][]float64 {
	c := make([][]float64, len(a))
	for i := range a {
		c[i] = make([]float64, n)
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				c[i][j] += a[i][p] * b[p][j]
			}
		}
	}
	return c
}

// assertClose fails unless got matches want elementwise within
// |got-want| ≤ tol·(1+|want|).
func assertClose(tb testing.TB, name string, got *Tensor, want [][]float64, tol float64) {
	tb.Helper()
	if got.Rows != len(want) {
		tb.Fatalf("%s: %d rows, want %d", name, got.Rows, len(want))
	}
	for i := range want {
		if got.Cols != len(want[i]) {
			tb.Fatalf("%s: %d cols, want %d", name, got.Cols, len(want[i]))
		}
		for j, w := range want[i] {
			if g := float64(got.At(i, j)); math.Abs(g-w) > tol*(1+math.Abs(w)) {
				tb.Fatalf("%s: (%d,%d) = %v, want %v", name, i, j, g, w)
			}
		}
	}
}

// sumProduct returns Σ out⊙r in float64: a scalar test loss whose gradient
// w.r.t. out is r.
func sumProduct(out, r *Tensor) float64 {
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
