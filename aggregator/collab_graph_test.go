package aggregator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteSimplex projects v onto the simplex by trying every support: on a
// support S the projection is v_S − (Σ v_S − 1)/|S|, feasible when
// positive; the nearest feasible candidate is the projection.
func bruteSimplex(v []float64) []float64 {
	n := len(v)
	var best []float64
	bestD := math.Inf(1)
	for mask := 1; mask < 1<<n; mask++ {
		var sum float64
		k := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				sum += v[i]
				k++
			}
		}
		tau := (sum - 1) / float64(k)
		w := make([]float64, n)
		ok := true
		for i := range n {
			if mask&(1<<i) != 0 {
				if w[i] = v[i] - tau; w[i] < -1e-12 {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		var d float64
		for i := range n {
			d += (w[i] - v[i]) * (w[i] - v[i])
		}
		if d < bestD-1e-15 {
			best, bestD = w, d
		}
	}
	return best
}

func TestProjectSimplexExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][]float64{
		{0.5, 0.5}, {1, 0, 0}, {0, 0, 0}, {-3, -3, -3, -3}, {10}, {-1}, {0.3, 0.3, 0.3}, {2, 2, -5, 0.1},
		{0.609375, 0.6875, 0, 0}, {1e9, -1e9, 0},
	}
	for range 400 {
		n := 1 + rng.IntN(7)
		v := make([]float64, n)
		scale := math.Pow(10, float64(rng.IntN(5)-2))
		for i := range v {
			v[i] = scale * rng.NormFloat64()
			if rng.IntN(5) == 0 && i > 0 {
				v[i] = v[i-1] // ties
			}
		}
		cases = append(cases, v)
	}
	for _, v := range cases {
		w := projectSimplex(v)
		// KKT: w ≥ 0, Σ w = 1, and one τ with w_i = v_i − τ where w_i > 0,
		// v_i ≤ τ where w_i = 0.
		var sum float64
		tau := math.NaN()
		for i, x := range w {
			if x < 0 {
				t.Fatalf("%v: negative weight %v", v, w)
			}
			sum += x
			if x > 0 {
				tau = v[i] - x
			}
		}
		tol := 1e-12 * max(1, maxAbs(v))
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("%v: weights %v sum to %v", v, w, sum)
		}
		for i, x := range w {
			if x > 0 && math.Abs(v[i]-x-tau) > tol || x == 0 && v[i] > tau+tol {
				t.Fatalf("%v: %v violates the KKT conditions at %d (τ %v)", v, w, i, tau)
			}
		}
		b := bruteSimplex(v)
		for i := range w {
			if math.Abs(w[i]-b[i]) > tol {
				t.Fatalf("%v: sorted projection %v, brute force %v", v, w, b)
			}
		}
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

func TestLaplacianFormsMatchTheMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, l = 4, 3
	w := make([]float64, n*n)
	for i := range w {
		w[i] = rng.Float64()
	}
	pi := make([][]float64, n)
	for i := range pi {
		pi[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	}
	e := laplacianForms(w, pi)
	for c := range l {
		// xᵀ (D − (W+Wᵀ)/2) x with D the degrees of (W+Wᵀ)/2.
		var want float64
		for i := range n {
			var deg float64
			for j := range n {
				ws := (w[i*n+j] + w[j*n+i]) / 2
				deg += ws
				want -= ws * pi[i][c] * pi[j][c]
			}
			want += deg * pi[i][c] * pi[i][c]
		}
		if math.Abs(e[c]-want) > 1e-12 {
			t.Errorf("coordinate %d: form %v, matrix %v", c, e[c], want)
		}
	}
}

func TestSubspaceSimilarity(t *testing.T) {
	r := []float64{1, 1, 1}
	th := 0.3
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"equal lines", []float32{1, 0, 0}, []float32{1, 0, 0}, 1},
		{"opposite signs", []float32{0, 0.6, 0.8}, []float32{0, -0.6, -0.8}, 1},
		{"orthogonal", []float32{1, 0, 0}, []float32{0, 1, 0}, 0},
		{"angle θ", []float32{1, 0, 0}, []float32{float32(math.Cos(th)), float32(math.Sin(th)), 0}, float64(float32(math.Cos(th)))},
		{"plane against a line in it", []float32{1, 0, 0, 0, 1, 0}, []float32{0, 1, 0, 0, 0, 0}, 0.5},
		{"zero padding", []float32{1, 0, 0, 0, 0, 0}, []float32{1, 0, 0}, 1},
		{"nothing", []float32{0, 0, 0}, []float32{1, 0, 0}, 0},
	}
	for _, tc := range tests {
		got := subspaceSimilarity(weightedBasis(tc.a, r), weightedBasis(tc.b, r))
		if math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// descRows lays per-client directions out as a graphStep input.
func descRows(dirs ...[]float32) []float32 {
	var out []float32
	for _, d := range dirs {
		out = append(out, d...)
	}
	return out
}

// Two groups of clients with equal sharing descriptors within each group
// and complementing descriptors all orthogonal: t_ij = α·0 − β·[same
// group] off the diagonal, α − β on it, and every row is the projection
// of −t_i/(2γ): worked by hand for the Cora setting (α .25, β 2.2, γ 1.6)
// as v = (0.609375, 0.6875, 0, 0), τ = 0.1484375.
func TestGraphStepTwoGroups(t *testing.T) {
	e := func(i int) []float32 { v := make([]float32, 8); v[i] = 1; return v }
	p := [][]float32{e(0), e(0), e(1), e(1)} // groups {0,1} and {2,3}
	q := [][]float32{e(4), e(5), e(6), e(7)} // all different
	w := graphStep(uniformGraph(4), p, q, 8, 0.25, 2.2, 1.6)
	want := []float64{
		0.4609375, 0.5390625, 0, 0,
		0.5390625, 0.4609375, 0, 0,
		0, 0, 0.4609375, 0.5390625,
		0, 0, 0.5390625, 0.4609375,
	}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-12 {
			t.Fatalf("graph %v, want %v", w, want)
		}
	}
	// Complementing: three clients that share alike; 0 and 1 have the
	// same heterophily, 2 another. Client 0 then leans towards 2:
	// v = ((β−α)/2γ, (β−α)/2γ, β/2γ) = (0.609375, 0.609375, 0.6875).
	p = [][]float32{e(0), e(0), e(0)}
	q = [][]float32{e(4), e(4), e(5)}
	w = graphStep(uniformGraph(3), p, q, 8, 0.25, 2.2, 1.6)
	tau := (0.609375*2 + 0.6875 - 1) / 3
	row0 := []float64{0.609375 - tau, 0.609375 - tau, 0.6875 - tau}
	for j, x := range row0 {
		if math.Abs(w[j]-x) > 1e-12 {
			t.Fatalf("row 0 %v, want %v", w[:3], row0)
		}
	}
	if !(w[2] > w[1]) {
		t.Fatalf("client 0 does not favour its complement: %v", w[:3])
	}
}

// randomOrthogonal is a random k×k orthogonal matrix with random signs.
func randomOrthogonal(rng *rand.Rand, k int) [][]float64 {
	var q [][]float64
	for len(q) < k {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for _, b := range q {
			var d float64
			for i := range v {
				d += v[i] * b[i]
			}
			for i := range v {
				v[i] -= d * b[i]
			}
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		for i := range v {
			v[i] /= math.Sqrt(n)
		}
		q = append(q, v)
	}
	return q
}

// rotate returns o·a for a kpr×l descriptor a.
func rotate(o [][]float64, a []float32, l int) []float32 {
	k := len(o)
	out := make([]float32, len(a))
	for r := range k {
		for c := range l {
			var s float64
			for m := range k {
				s += o[r][m] * float64(a[m*l+c])
			}
			out[r*l+c] = float32(s)
		}
	}
	return out
}

// Principal directions come with arbitrary signs and, within a subspace,
// an arbitrary basis: flipping or rotating a client's directions must not
// change the graph.
func TestGraphStepSignAndRotationInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, kpr, l = 5, 3, 12
	rnd := func() []float32 {
		// Orthonormal rows, as principal directions are.
		o := randomOrthogonal(rng, l)
		a := make([]float32, 0, kpr*l)
		for r := range kpr {
			for _, x := range o[r] {
				a = append(a, float32(x))
			}
		}
		return a
	}
	p := make([][]float32, n)
	q := make([][]float32, n)
	for i := range n {
		p[i], q[i] = rnd(), rnd()
	}
	w0 := uniformGraph(n)
	// A learned graph as the starting point too, so that the Laplacian
	// forms see unequal weights.
	w1 := graphStep(w0, p, q, l, 0.25, 2.2, 1.6)
	for _, start := range [][]float64{w0, w1} {
		want := graphStep(start, p, q, l, 0.25, 2.2, 1.6)
		for trial := range 4 {
			p2, q2 := append([][]float32(nil), p...), append([][]float32(nil), q...)
			c := trial % n
			p2[c], q2[c] = rotate(randomOrthogonal(rng, kpr), p[c], l), rotate(randomOrthogonal(rng, kpr), q[c], l)
			got := graphStep(start, p2, q2, l, 0.25, 2.2, 1.6)
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-6 {
					t.Fatalf("rotating client %d's directions moved w[%d] from %v to %v", c, i, want[i], got[i])
				}
			}
		}
	}
	var moved bool
	for i := range w1 {
		moved = moved || math.Abs(w1[i]-w0[i]) > 1e-3
	}
	if !moved {
		t.Fatal("the graph did not move from its initialisation: the test cannot tell")
	}
}
