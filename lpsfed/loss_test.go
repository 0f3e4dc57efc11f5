package lpsfed

import (
	"fmt"
	"math"
	"testing"
)

func TestLossGradients(t *testing.T) {
	rng := newRNG(1)
	rand := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * (2*rng.Float64() - 1)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		b, k int
		tau  float64
	}{{"one", 1, 1, 0.1}, {"small-tau", 3, 4, 0.05}, {"wide", 5, 2, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			pos, neg := rand(tc.b, 1), rand(tc.b*tc.k, 1)
			dp, dn := make([]float64, tc.b), make([]float64, tc.b*tc.k)
			scratchP, scratchN := make([]float64, tc.b), make([]float64, tc.b*tc.k)
			nce := func() float64 { return infoNCE(pos, neg, tc.k, tc.tau, scratchP, scratchN) }
			infoNCE(pos, neg, tc.k, tc.tau, dp, dn)
			checkGrad64(t, "infonce pos", pos, dp, nce)
			checkGrad64(t, "infonce neg", neg, dn, nce)

			pos, neg = rand(tc.b, 3), rand(tc.b*tc.k, 3)
			b := func() float64 { return bpr(pos, neg, tc.k, scratchP, scratchN) }
			bpr(pos, neg, tc.k, dp, dn)
			checkGrad64(t, "bpr pos", pos, dp, b)
			checkGrad64(t, "bpr neg", neg, dn, b)
		})
	}
}

// TestBCPositiveGradient checks d cos(R̂ + M̃)/ds on both margin branches,
// with and without a global margin, away from the kinks.
func TestBCPositiveGradient(t *testing.T) {
	for _, tc := range []struct {
		s, xi, gamma, omega, global float64
		hasGlobal, fallback         bool
	}{
		{0.3, 0.2, 1, 0.25, 0, false, false},   // γξ̂ branch
		{-0.4, 0.5, 1, 0.25, 0.3, true, false}, // γξ̂ branch with a global margin
		{1.5, 3.0, 1, 0.25, 0.1, true, false},  // π − R̂ branch with a global margin
		{0.8, 2.9, 0.5, 0.6, 0.2, true, false},
		{-2, 0.1, 1, 0.25, 0.2, true, false}, // large R̂: clamped at π
		// ArcFace's fallback where the guard binds: the slope of tanh.
		{-2, 0.1, 1, 0.25, 0.2, true, true},
		{1.5, 3.0, 1, 0.25, 0.1, true, true},
		{-0.9, 2.5, 1, 0.25, 0, false, true},
		// Away from the guard the fallback changes nothing.
		{0.3, 0.2, 1, 0.25, 0, false, true},
		{-0.4, 0.5, 1, 0.25, 0.3, true, true},
	} {
		t.Run(fmt.Sprintf("s=%g,xi=%g", tc.s, tc.xi), func(t *testing.T) {
			f := func(s float64) float64 {
				l, _, _ := bcPositive(s, tc.xi, tc.gamma, tc.omega, tc.global, tc.hasGlobal, tc.fallback)
				return l
			}
			l, g, m := bcPositive(tc.s, tc.xi, tc.gamma, tc.omega, tc.global, tc.hasGlobal, tc.fallback)
			const h = 1e-6
			num := (f(tc.s+h) - f(tc.s-h)) / (2 * h)
			if math.Abs(num-g) > 1e-6 {
				t.Fatalf("analytic %.9g, numeric %.9g", g, num)
			}
			r, _ := angleOf(tc.s)
			if want := math.Min(tc.gamma*tc.xi, math.Pi-r); math.Abs(m-want) > 1e-12 {
				t.Fatalf("margin %v, want %v", m, want)
			}
			plain, _, _ := bcPositive(tc.s, tc.xi, tc.gamma, tc.omega, tc.global, tc.hasGlobal, false)
			mt := m
			if tc.hasGlobal {
				mt = tc.omega*tc.global + (1-tc.omega)*m
			}
			guard := tc.gamma*tc.xi >= math.Pi-r || r+mt >= math.Pi
			switch {
			case tc.fallback && guard && !(g > 0 && l < math.Tanh(tc.s)):
				t.Fatalf("fallback logit %v slope %v: want below cos R̂ = %v with a positive slope", l, g, math.Tanh(tc.s))
			case (!tc.fallback || !guard) && l != plain:
				t.Fatalf("logit %v, want Eq. 9's %v", l, plain)
			}
		})
	}
}

func TestAngleOf(t *testing.T) {
	for _, s := range []float64{-30, -2, 0, 0.5, 30} {
		r, sin := angleOf(s)
		if math.Abs(math.Cos(r)-math.Tanh(s)) > 1e-12 || math.Abs(sin-math.Sin(r)) > 1e-9 || r < 0 || r > math.Pi {
			t.Fatalf("s=%v: R̂=%v sin=%v", s, r, sin)
		}
	}
}
