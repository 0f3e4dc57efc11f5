package spectral

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLowPassKernel(t *testing.T) {
	cases := []struct {
		name   string
		lambda []float64
		floor  float64
		want   []float64
	}{
		{"proportional", []float64{0.5, 1, 2.5 - 2}, 1e-9, []float64{0.5 / 2, 1 / 2.0, 0.5 / 2}},
		{"zero floored", []float64{0, 1, 1}, 1e-9, []float64{1e-9 / (2 + 1e-9), 1 / (2 + 1e-9), 1 / (2 + 1e-9)}},
		{"rounding negative floored", []float64{-1e-15, 0.5}, 0.01, []float64{0.01 / 0.51, 0.5 / 0.51}},
		{"all zero is uniform", []float64{0, 0, 0, 0}, 1e-9, []float64{0.25, 0.25, 0.25, 0.25}},
		{"above 2 by rounding clipped", []float64{2 + 1e-9, 2}, 1e-9, []float64{0.5, 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := LowPassKernel(c.lambda, c.floor)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for i, v := range k {
				sum += v
				if math.Abs(v-c.want[i]) > 1e-15 {
					t.Errorf("K(%d) = %v, want %v", i, v, c.want[i])
				}
				if !(v > 0) {
					t.Errorf("K(%d) = %v not positive", i, v)
				}
			}
			if math.Abs(sum-1) > 1e-15 {
				t.Errorf("kernel sums to %v", sum)
			}
		})
	}
	for _, bad := range []struct {
		lambda []float64
		floor  float64
	}{{nil, 1e-9}, {[]float64{math.NaN()}, 1e-9}, {[]float64{-0.1}, 1e-9}, {[]float64{2.1}, 1e-9},
		{[]float64{1}, 0}, {[]float64{1}, -1}, {[]float64{1}, math.Inf(1)}} {
		if _, err := LowPassKernel(bad.lambda, bad.floor); err == nil {
			t.Errorf("LowPassKernel(%v, %v) accepted", bad.lambda, bad.floor)
		}
	}
}

func TestKL(t *testing.T) {
	// D(p‖q) for p = (1/2, 1/2), q = (1/4, 3/4): ½ln2 + ½ln(2/3).
	d, err := KL([]float64{0.5, 0.5}, []float64{0.25, 0.75})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.5*math.Log(2) + 0.5*math.Log(2.0/3); math.Abs(d-want) > 1e-15 {
		t.Errorf("KL = %v, want %v", d, want)
	}
	// Asymmetric, zero on equal inputs, zero terms for p_i = 0.
	back, _ := KL([]float64{0.25, 0.75}, []float64{0.5, 0.5})
	if math.Abs(back-d) < 1e-3 {
		t.Errorf("KL looks symmetric: %v and %v", d, back)
	}
	if z, _ := KL([]float64{0.2, 0.3, 0.5}, []float64{0.2, 0.3, 0.5}); z != 0 {
		t.Errorf("KL(p‖p) = %v", z)
	}
	if z, err := KL([]float64{0, 1}, []float64{0.5, 0.5}); err != nil || math.Abs(z-math.Log(2)) > 1e-15 {
		t.Errorf("KL with a zero p term = %v, %v", z, err)
	}
	// Gibbs: positive for random distinct kernels.
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 50; trial++ {
		a, b := make([]float64, 16), make([]float64, 16)
		for i := range a {
			a[i], b[i] = rng.Float64()*2, rng.Float64()*2
		}
		ka, _ := LowPassKernel(a, KernelFloor)
		kb, _ := LowPassKernel(b, KernelFloor)
		if v, err := KL(ka, kb); err != nil || !(v > 0) {
			t.Fatalf("KL of distinct kernels = %v, %v", v, err)
		}
	}
	for _, bad := range [][2][]float64{
		{{0.5, 0.5}, {1}}, {nil, nil}, {{0.5, 0.5}, {1, 0}}, {{0.5, 0.6}, {0.5, 0.5}},
		{{math.NaN(), 1}, {0.5, 0.5}}, {{1, 0}, {-0.5, 1.5}},
	} {
		if _, err := KL(bad[0], bad[1]); err == nil {
			t.Errorf("KL(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// TestKLZeroEigenvalues shows why the kernel floors eigenvalues: a client
// graph with more components than the reference has zero eigenvalues where
// the reference has positive ones, and the divergence stays finite,
// growing with the number of extra components.
func TestKLZeroEigenvalues(t *testing.T) {
	ref, _ := LowPassKernel([]float64{0, 0.1, 0.2, 0.3}, KernelFloor)
	prev := 0.0
	for zeros := 1; zeros <= 3; zeros++ {
		lam := []float64{0.1, 0.2, 0.3, 0.4}
		for i := 0; i < zeros; i++ {
			lam[i] = 0
		}
		k, _ := LowPassKernel(lam, KernelFloor)
		d, err := KL(ref, k)
		if err != nil || math.IsInf(d, 0) || d <= prev {
			t.Errorf("%d zero eigenvalues: KL = %v, %v (previous %v)", zeros, d, err, prev)
		}
		prev = d
	}
}

func TestMinMaxNormalize(t *testing.T) {
	cases := []struct {
		name     string
		rho, out []float64
	}{
		{"spread", []float64{0.2, 0.6, 1.0}, []float64{1, 0.5, 0}},
		{"unordered", []float64{3, 1, 2}, []float64{0, 1, 0.5}},
		{"all equal", []float64{0.4, 0.4, 0.4}, []float64{1, 1, 1}},
		{"equal up to rounding", []float64{0.1 + 0.2, 0.3}, []float64{1, 1}},
		{"single client", []float64{7}, []float64{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := MinMaxNormalize(c.rho)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Abs(got[i]-c.out[i]) > 1e-15 {
					t.Errorf("ρ̄ = %v, want %v", got, c.out)
					break
				}
			}
		})
	}
	for _, bad := range [][]float64{nil, {}, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := MinMaxNormalize(bad); err == nil {
			t.Errorf("MinMaxNormalize(%v) accepted", bad)
		}
	}
}

// TestKernelPipeline runs Eq. 6 → 11 → 12 on real spectra: a reference
// GNMK graph and three clients, one drawn from the same model (closest),
// one far denser and one broken into many components.
func TestKernelPipeline(t *testing.T) {
	st := GraphStats{Users: 300, Items: 400, Edges: 1500}
	phi := 32
	ref, err := ReferenceKernel(ReferenceGNMK, st, phi, rand.New(rand.NewPCG(1, 1)), EigenOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	kernelOf := func(u, i, e int, seed uint64) []float64 {
		l, err := NewBipartiteLaplacian(gnmkGraph(t, u, i, e, seed))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := LowestEigenpairs(l, phi, EigenOptions{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		k, err := LowPassKernel(ev.Values, KernelFloor)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	clients := [][]float64{
		kernelOf(300, 400, 1500, 9),  // same model
		kernelOf(300, 400, 12000, 9), // dense
		kernelOf(300, 400, 350, 9),   // many components
	}
	rho := make([]float64, len(clients))
	for c, k := range clients {
		if rho[c], err = KL(ref, k); err != nil {
			t.Fatal(err)
		}
	}
	w, err := MinMaxNormalize(rho)
	if err != nil {
		t.Fatal(err)
	}
	if !(rho[0] < rho[1] && rho[0] < rho[2]) || w[0] != 1 {
		t.Errorf("ρ = %v, ρ̄ = %v: the client drawn like the reference is not the closest", rho, w)
	}
}
