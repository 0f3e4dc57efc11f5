package privacy

import (
	"errors"
	"math"
	"testing"
)

// EpsilonForSigma is `graphfed privacy epsilon`: CE-FedGNN Table 6's
// 90th-percentile cell under both accountants, nothing released costing
// nothing, and SigmaForEpsilon's σ spending its target.
func TestEpsilonForSigma(t *testing.T) {
	for _, tc := range []struct {
		name              string
		sigma, delta, rho float64
		releases          int
		kind              AccountantKind
		eps, mu, order    float64
	}{
		{"table 6 p90, rdp", 0.3, 1e-4, 0.1466, 200, RDP, 51.7936164293168, 6.910790274796525, 1.6},
		{"table 6 p90, exact", 0.3, 1e-4, 0.1466, 200, Exact, 48.78286992473767, 6.910790274796525, 0},
		{"no releases", 0.3, 1e-4, 0.1466, 0, RDP, 0, 0, 0},
		{"distance zero", 0.3, 1e-4, 0, 200, Exact, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := EpsilonForSigma(tc.sigma, tc.delta, tc.rho, tc.releases, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c.Epsilon-tc.eps) > 1e-9 || math.Abs(c.Mu-tc.mu) > 1e-12 || c.RDPOrder != tc.order {
				t.Fatalf("got %+v, want ε %v μ %v order %v", c, tc.eps, tc.mu, tc.order)
			}
		})
	}
	sigma, err := SigmaForEpsilon(8, 1e-4, 0.5, 12, Exact)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := EpsilonForSigma(sigma, 1e-4, 0.5, 12, Exact); err != nil || c.Epsilon > 8 || c.Epsilon < 8*(1-1e-6) {
		t.Fatalf("σ for ε 8 spends %+v, %v", c, err)
	}
}

func TestEpsilonForSigmaRefuses(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name              string
		sigma, delta, rho float64
		releases          int
		kind              AccountantKind
	}{
		{"zero σ", 0, 1e-4, 0.1, 1, RDP},
		{"NaN σ", math.NaN(), 1e-4, 0.1, 1, RDP},
		{"infinite σ", inf, 1e-4, 0.1, 1, RDP},
		{"negative ρ", 1, 1e-4, -1, 1, RDP},
		{"infinite ρ", 1, 1e-4, inf, 1, Exact},
		{"negative releases", 1, 1e-4, 0.1, -1, RDP},
		{"δ one", 1, 1, 0.1, 1, RDP},
		{"δ zero", 1, 0, 0.1, 1, Exact},
		{"no accountant", 1, 1e-4, 0.1, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EpsilonForSigma(tc.sigma, tc.delta, tc.rho, tc.releases, tc.kind); !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
		})
	}
}
