package fedgsp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestTopEigenIterativeMatchesExact runs the subspace iteration (limit 0)
// and the full decomposition on Gram matrices of random data, including a
// rank-deficient one, and compares values and vectors up to sign.
func TestTopEigenIterativeMatchesExact(t *testing.T) {
	cases := []struct {
		name       string
		n, cols, k int
	}{
		{"wide data", 120, 300, 3},
		{"rank 5", 90, 5, 6},
		{"k above n", 4, 10, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := newRNG(21)
			x := mat.NewDense(c.n, c.cols, nil)
			for i := 0; i < c.n; i++ {
				for j := 0; j < c.cols; j++ {
					// Decaying column scales give a spread spectrum.
					x.Set(i, j, rng.NormFloat64()/float64(1+j))
				}
			}
			g := mat.NewSymDense(c.n, nil)
			g.SymOuterK(1, x)
			ev, evec, err := topEigen(g, c.k, c.n)
			if err != nil {
				t.Fatal(err)
			}
			iv, ivec, err := topEigen(g, c.k, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ev) != min(c.k, c.n) || len(iv) != len(ev) {
				t.Fatalf("%d exact and %d iterative values, want %d", len(ev), len(iv), min(c.k, c.n))
			}
			for a := range ev {
				if !approx(ev[a], iv[a], 1e-8) && ev[a] > 1e-9*ev[0] {
					t.Errorf("value %d: exact %v, iterative %v", a, ev[a], iv[a])
				}
				if a > 0 && ev[a] > ev[a-1] {
					t.Errorf("values not decreasing at %d", a)
				}
				if !significant(ev[a], ev[0]) {
					continue // no direction to compare beyond the rank
				}
				u, v := mat.Col(nil, a, evec), mat.Col(nil, a, ivec)
				if cos := math.Abs(dot(u, v)); !approx(cos, 1, 1e-6) {
					t.Errorf("vector %d: |cos| %v", a, cos)
				}
			}
		})
	}
}
