package spectral

import (
	"math"
	"strings"
	"testing"
)

// diagOp is a diagonal operator: its eigenvectors are the unit vectors, so
// multiplicities can be set at will.
type diagOp []float64

func (d diagOp) Dim() int { return len(d) }

func (d diagOp) MulBlock(dst, src []float64, k int) {
	for i, v := range d {
		for c := 0; c < k; c++ {
			dst[i*k+c] = v * src[i*k+c]
		}
	}
}

func TestLanczosLargestMultiplicity(t *testing.T) {
	// 1 with multiplicity 10 (above the block size 4), then 0.9 twice,
	// then a bulk in [0, 0.5].
	n := 1000
	d := make(diagOp, n)
	for i := range d {
		switch {
		case i < 10:
			d[i] = 1
		case i < 12:
			d[i] = 0.9
		default:
			d[i] = 0.5 * float64(i) / float64(n)
		}
	}
	res, err := LanczosLargest(d, 12, LanczosOptions{Seed: 5, DenseMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	for q, v := range res.Values {
		want := 1.0
		if q >= 10 {
			want = 0.9
		}
		if math.Abs(v-want) > 1e-12 {
			t.Errorf("value %d = %.15g, want %v", q, v, want)
		}
	}
	// Residuals computed directly, and orthonormality.
	for q := 0; q < 12; q++ {
		var r, dotq float64
		for i := 0; i < n; i++ {
			x := res.Vectors[i*12+q]
			r += math.Pow(d[i]*x-res.Values[q]*x, 2)
			dotq += x * x
		}
		if math.Sqrt(r) > 1e-10 || math.Abs(dotq-1) > 1e-12 {
			t.Errorf("pair %d: residual %g, norm² %v", q, math.Sqrt(r), dotq)
		}
	}
	if res.Probes == 0 {
		t.Error("a multiplicity above the block size was found without probing")
	}
}

func TestLanczosLargestDenseFallback(t *testing.T) {
	d := diagOp{3, 1, 2, 5, 4}
	res, err := LanczosLargest(d, 2, LanczosOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Values[0] != 5 || res.Values[1] != 4 || math.Abs(math.Abs(res.Vectors[3*2+0])-1) > 1e-15 {
		t.Errorf("dense fallback: %+v", res)
	}
}

func TestLanczosLargestErrors(t *testing.T) {
	d := make(diagOp, 500)
	for i := range d {
		d[i] = float64(i)
	}
	for _, c := range []struct {
		nev  int
		opt  LanczosOptions
		want string
	}{
		{0, LanczosOptions{}, "want 1..500"},
		{501, LanczosOptions{}, "want 1..500"},
		{3, LanczosOptions{Block: -1}, "want non-negative"},
		{3, LanczosOptions{Tol: math.NaN()}, "want non-negative"},
		{300, LanczosOptions{MaxRestarts: 1, MaxBasis: 310, Tol: 1e-300, DenseMax: -1, DenseLimit: -1}, "no convergence"},
	} {
		_, err := LanczosLargest(d, c.nev, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "spectral: lanczos: ") {
			t.Errorf("nev %d %+v: error %v, want %q", c.nev, c.opt, err, c.want)
		}
	}
}

// TestBlockKernels checks the register-blocked kernels, for shapes that hit
// every remainder path, against plain loops.
func TestBlockKernels(t *testing.T) {
	for _, s := range []struct{ m, k, n int }{{1, 1, 5}, {2, 4, 3000}, {7, 5, 4100}, {9, 3, 2049}, {4, 8, 1}, {40, 4, 5000}} {
		m, k, n := s.m, s.k, s.n
		v := make([]float64, m*n)
		w := make([]float64, k*n)
		for i := range v {
			v[i] = math.Sin(float64(i))
		}
		for i := range w {
			w[i] = math.Cos(float64(3 * i))
		}
		g := make([]float64, m*k)
		gram(g, k, v, m, w, k, n)
		for j := 0; j < m; j++ {
			for c := 0; c < k; c++ {
				var want float64
				for p := 0; p < n; p++ {
					want += v[j*n+p] * w[c*n+p]
				}
				if math.Abs(g[j*k+c]-want) > 1e-9 {
					t.Fatalf("%v: gram[%d,%d] = %v, want %v", s, j, c, g[j*k+c], want)
				}
			}
		}
		w2 := append([]float64(nil), w...)
		subMul(w2, k, v, m, g, k, n)
		for c := 0; c < k; c++ {
			for p := 0; p < n; p++ {
				want := w[c*n+p]
				for j := 0; j < m; j++ {
					want -= g[j*k+c] * v[j*n+p]
				}
				if math.Abs(w2[c*n+p]-want) > 1e-9 {
					t.Fatalf("%v: submul[%d,%d] = %v, want %v", s, c, p, w2[c*n+p], want)
				}
			}
		}
		if k <= m {
			y := make([]float64, m*k)
			for i := range y {
				y[i] = float64(i%7) - 3
			}
			v2 := append([]float64(nil), v...)
			mulInPlace(v2, m, y, k, k, n)
			for c := 0; c < k; c++ {
				for p := 0; p < n; p++ {
					var want float64
					for j := 0; j < m; j++ {
						want += y[j*k+c] * v[j*n+p]
					}
					if math.Abs(v2[c*n+p]-want) > 1e-9 {
						t.Fatalf("%v: mulinplace[%d,%d] = %v, want %v", s, c, p, v2[c*n+p], want)
					}
				}
			}
		}
	}
}
