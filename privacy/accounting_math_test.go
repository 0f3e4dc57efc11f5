package privacy

import (
	"math"
	"testing"
)

// Reference values of log Φ(x) from mpmath at 50 digits.
func TestLogNormCDF(t *testing.T) {
	for _, tc := range []struct{ x, want float64 }{
		{-1000, -500007.82669481218431},
		{-200, -20006.217280898190402},
		{-45, -1017.2260942419523707},
		{-38, -726.5572160188201301},
		{-30.0001, -454.32424728730441463}, // asymptotic series
		{-30, -454.32124395634319711},      // log erfc
		{-29.9999, -454.31824063537094187},
		{-20, -203.91715537109726394},
		{-5, -15.064998393988725736},
		{-1, -1.8410216450092635058},
		{0, -0.69314718055994530942},
		{1, -0.17275377902344988953},
		{5, -2.8665161296376359338e-7},
		{10, -7.619853024160526066e-24},
	} {
		got := logNormCDF(tc.x)
		if rel := math.Abs(got-tc.want) / math.Abs(tc.want); rel > 1e-13 {
			t.Errorf("logNormCDF(%v) = %.17g, want %.17g (relative error %.1e)", tc.x, got, tc.want, rel)
		}
	}
	if !math.IsInf(logNormCDF(math.Inf(-1)), -1) || logNormCDF(math.Inf(1)) != 0 || !math.IsNaN(logNormCDF(math.NaN())) {
		t.Error("logNormCDF mishandles infinities or NaN")
	}
}

func TestExactEpsilonLarge(t *testing.T) {
	// mpmath, 60 digits: the ε with δ(ε) = 1e-4 (beyond e^709 overflow).
	for _, tc := range []struct{ mu, want float64 }{
		{150, 11806.864682260590357},
		{200, 20742.812488896139635},
		{42.016284938104653899898, 1037.985314}, // Table 6, ρ=0.8913 σ=0.3 (exact_eps, 6 decimals)
	} {
		got := ExactEpsilon(tc.mu, 1e-4)
		if math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("ExactEpsilon(%v) = %.12g, want %.12g", tc.mu, got, tc.want)
		}
		if d := ExactDelta(tc.mu, got); d > 1e-4 || d < 1e-4*(1-1e-9) {
			t.Errorf("ExactDelta(%v, %v) = %v, want 1e-4 from below", tc.mu, got, d)
		}
	}
}

func TestExactEpsilonDeltaInverse(t *testing.T) {
	for _, mu := range []float64{1e-3, 0.05, 0.3, 1, 3, 10, 42, 100} {
		for _, delta := range []float64{1e-12, 1e-8, 1e-5, 1e-3, 0.1} {
			eps := ExactEpsilon(mu, delta)
			if eps == 0 {
				if ExactDelta(mu, 0) > delta {
					t.Errorf("μ=%v δ=%v: ε=0 but δ(0)=%v", mu, delta, ExactDelta(mu, 0))
				}
				continue
			}
			d := ExactDelta(mu, eps)
			dLess := ExactDelta(mu, eps*(1-1e-9))
			if d > delta || dLess <= delta*(1-1e-6) {
				t.Errorf("μ=%v δ=%v: ε=%v gives δ=%v, slightly less ε gives %v", mu, delta, eps, d, dLess)
			}
		}
	}
	if ExactEpsilon(0, 1e-5) != 0 || ExactDelta(0, 1) != 0 {
		t.Error("μ=0 must cost nothing")
	}
}

func TestRDPEpsilon(t *testing.T) {
	// Table 6, ρ=0.0533 σ=1.0, 200 releases: rdp_eps 3.005277.
	mu2 := 200 * 0.0533 * 0.0533 / (1.0 * 1.0)
	eps, alpha := RDPEpsilon(mu2, 1e-4)
	if math.Abs(eps-3.005277) > 1e-6 || alpha <= 1 {
		t.Errorf("RDPEpsilon = %v at α=%v, want 3.005277", eps, alpha)
	}
	if e, _ := RDPEpsilon(0, 1e-4); e != 0 {
		t.Errorf("no releases cost %v", e)
	}
	if rdpOrder(0) != 1.1 || rdpOrder(98) != 10.9 || rdpOrder(99) != 12 || rdpOrder(rdpOrderCount-1) != 63 {
		t.Error("orders are not Opacus' defaults")
	}
}

// maxMu2 inverts ε(μ²): the cap is within budget and barely so.
func TestMaxMu2(t *testing.T) {
	for _, kind := range []AccountantKind{RDP, Exact} {
		for _, eps := range []float64{0.1, 1, 3, 10, 100, 1000} {
			for _, delta := range []float64{1e-6, 1e-4} {
				m := kind.maxMu2(eps, delta)
				if m == 0 && kind == RDP {
					// Opacus' largest order, 63, cannot certify so small
					// an ε: even a vanishing release is over budget.
					if got := kind.Epsilon(1e-12, delta); got <= eps {
						t.Errorf("rdp ε=%v δ=%v: cap 0 but a tiny release costs only %v", eps, delta, got)
					}
					continue
				}
				if m <= 0 {
					t.Fatalf("%v ε=%v: cap %v", kind, eps, m)
				}
				if got := kind.Epsilon(m, delta); got > eps*(1+1e-12) {
					t.Errorf("%v: ε(cap)=%v above budget %v", kind, got, eps)
				}
				if got := kind.Epsilon(m*(1+1e-6), delta); got <= eps {
					t.Errorf("%v: cap %v for ε=%v is not tight (ε just above it %v)", kind, m, eps, got)
				}
			}
		}
	}
}

// The exact accountant is tighter than RDP, never looser.
func TestExactTighterThanRDP(t *testing.T) {
	for _, mu2 := range []float64{0.01, 0.5, 3, 50, 2000} {
		r, e := RDP.Epsilon(mu2, 1e-5), Exact.Epsilon(mu2, 1e-5)
		if e > r {
			t.Errorf("μ²=%v: exact ε %v above RDP ε %v", mu2, e, r)
		}
	}
}

func TestParseAccountantKind(t *testing.T) {
	for s, want := range map[string]AccountantKind{"rdp": RDP, "exact": Exact} {
		if k, err := ParseAccountantKind(s); err != nil || k != want || k.String() != s {
			t.Errorf("%q: %v %v", s, k, err)
		}
	}
	if _, err := ParseAccountantKind("RDP"); err == nil {
		t.Error("parse accepts unknown names")
	}
}

// FuzzExactEpsilon: for any μ and δ the solver returns an ε that meets δ,
// is finite where it should be, and never exceeds the RDP bound by more
// than rounding.
func FuzzExactEpsilon(f *testing.F) {
	f.Add(42.0, 1e-4)
	f.Add(1e-3, 0.5)
	f.Add(150.0, 1e-12)
	f.Fuzz(func(t *testing.T, mu, delta float64) {
		if !(mu > 0 && mu < 1e3) || !(delta > 1e-300 && delta < 1) {
			return
		}
		eps := ExactEpsilon(mu, delta)
		if math.IsNaN(eps) || eps < 0 || math.IsInf(eps, 0) {
			t.Fatalf("ExactEpsilon(%v, %v) = %v", mu, delta, eps)
		}
		if d := ExactDelta(mu, eps); d > delta*(1+1e-9) {
			t.Fatalf("ExactDelta(%v, %v) = %v > δ = %v", mu, eps, d, delta)
		}
		if r, _ := RDPEpsilon(mu*mu, delta); eps > r*(1+1e-9)+1e-12 && r > 0 {
			t.Fatalf("μ=%v δ=%v: exact ε %v above RDP ε %v", mu, delta, eps, r)
		}
	})
}
