package privacy

import (
	"fmt"
	"math"
)

// Composition is the ε at δ that EpsilonForSigma finds, with what it
// depends on.
type Composition struct {
	Epsilon float64
	// Mu is the composition's Gaussian-DP parameter, sqrt(releases)·ρ/σ.
	Mu float64
	// RDPOrder is the Rényi order the RDP accountant's ε is minimised at;
	// 0 under the exact accountant, or when nothing is released.
	RDPOrder float64
}

// EpsilonForSigma is the ε at delta of releases Gaussian releases with
// noise sigma per coordinate of a value at metric distance (or
// sensitivity) rho, under the accountant kind: one cell of CE-FedGNN
// Table 6. It is SigmaForEpsilon's inverse.
func EpsilonForSigma(sigma, delta, rho float64, releases int, kind AccountantKind) (Composition, error) {
	const op = "epsilon for sigma"
	switch {
	case kind != RDP && kind != Exact:
		return Composition{}, errorf(op, ErrInvalid, "unknown accountant kind "+kind.String())
	case !(sigma > 0) || math.IsInf(sigma, 0):
		return Composition{}, errorf(op, ErrInvalid, fmt.Sprintf("noise σ %v must be positive and finite", sigma))
	case !(rho >= 0) || math.IsInf(rho, 0):
		return Composition{}, errorf(op, ErrInvalid, fmt.Sprintf("distance ρ %v must be non-negative and finite", rho))
	case releases < 0:
		return Composition{}, errorf(op, ErrInvalid, fmt.Sprintf("%d releases (want at least 0)", releases))
	case !(delta > 0 && delta < 1):
		return Composition{}, errorf(op, ErrInvalid, fmt.Sprintf("delta %v outside (0, 1)", delta))
	}
	mu2 := float64(releases) * rho * rho / (sigma * sigma)
	c := Composition{Epsilon: kind.Epsilon(mu2, delta), Mu: math.Sqrt(mu2)}
	if kind == RDP {
		_, c.RDPOrder = RDPEpsilon(mu2, delta)
	}
	return c, nil
}
