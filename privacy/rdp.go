package privacy

import "math"

// RDP accounting of Gaussian mechanisms without subsampling (Mironov 2017;
// CE-FedGNN Theorem 3.6). A Gaussian release with noise σ of a value whose
// neighbours lie at L2 distance ρ is (α, α·ρ²/(2σ²))-RDP for every order
// α > 1, and RDP composes additively, so R releases have
//
//	rdp(α) = α·μ²/2,   μ² = Σ_i ρ²/σ_i².
//
// The conversion to (ε, δ) is Canonne, Kamath and Steinke's (Prop. 12), as
// in Opacus' get_privacy_spent:
//
//	ε(δ) = min_α rdp(α) − (log δ + log α)/(α − 1) + log((α − 1)/α).

// rdpOrderCount is the number of Opacus default orders.
const rdpOrderCount = 99 + 52

// rdpOrder returns the i-th of Opacus' DEFAULT_ALPHAS,
// [1 + x/10 for x in 1..99] + [12..63], computed as Python does.
func rdpOrder(i int) float64 {
	if i < 99 {
		return 1 + float64(i+1)/10.0
	}
	return float64(12 + i - 99)
}

// rdpConversion is the part of the RDP-to-(ε, δ) conversion that does not
// depend on the releases: −(log δ + log α)/(α − 1) + log((α − 1)/α).
func rdpConversion(alpha, delta float64) float64 {
	return -(math.Log(delta)+math.Log(alpha))/(alpha-1) + math.Log((alpha-1)/alpha)
}

// RDPEpsilon returns the ε at δ of a composition of Gaussian mechanisms
// whose squared Gaussian-DP parameter is mu2 = Σ ρ²/σ_i², minimised over
// Opacus' default orders, and the minimising order. No releases (mu2 = 0)
// cost nothing: ε = 0. ε is clamped at 0 from below.
func RDPEpsilon(mu2, delta float64) (eps, alpha float64) {
	if mu2 <= 0 {
		return 0, 0
	}
	eps = math.Inf(1)
	for i := range rdpOrderCount {
		a := rdpOrder(i)
		e := a*mu2/2 + rdpConversion(a, delta)
		if e < eps {
			eps, alpha = e, a
		}
	}
	return math.Max(eps, 0), alpha
}

// rdpMaxMu2 is the largest μ² whose RDP ε at δ is at most eps:
// ε(μ²) ≤ E ⇔ ∃α: α·μ²/2 + c(α) ≤ E ⇔ μ² ≤ max_α 2(E − c(α))/α.
// It is 0 when no composition fits (and so no release may be made).
func rdpMaxMu2(eps, delta float64) float64 {
	best := 0.0
	for i := range rdpOrderCount {
		a := rdpOrder(i)
		if m := 2 * (eps - rdpConversion(a, delta)) / a; m > best {
			best = m
		}
	}
	return best
}
