package privacy

import "math"

// Exact accounting of composed Gaussian mechanisms (Dong, Roth and Su's
// Gaussian DP). R releases with noises σ_i of a value whose neighbours lie
// at distance ρ are together exactly as distinguishable as one Gaussian
// mechanism with μ = sqrt(Σ ρ²/σ_i²), whose privacy profile is
//
//	δ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ).
//
// e^ε overflows at ε ≈ 709 and Φ(−μ/2 − ε/μ) underflows long before, so the
// second term is evaluated as exp(ε + log Φ(−μ/2 − ε/μ)) with logNormCDF.

// exactMaxIter bounds every bisection; 200 halvings of a log-space bracket
// reach float64 resolution from any start.
const exactMaxIter = 200

// ExactDelta returns δ(ε) of one Gaussian mechanism with parameter mu
// (μ = sqrt(Σ ρ²/σ_i²)). It is 0 for mu = 0.
func ExactDelta(mu, eps float64) float64 {
	if mu <= 0 {
		return 0
	}
	a := mu/2 - eps/mu
	b := -mu/2 - eps/mu
	d := normCDF(a) - math.Exp(eps+logNormCDF(b))
	return math.Max(d, 0)
}

// ExactEpsilon returns the smallest ε with ExactDelta(mu, ε) ≤ delta, found
// by bisection on log ε; the returned ε is the upper end of the final
// bracket, so ExactDelta(mu, ε) ≤ delta holds for it. It is 0 when
// mu = 0 or δ(0) ≤ delta, and +Inf when no ε below 1e300 suffices.
func ExactEpsilon(mu, delta float64) float64 {
	if mu <= 0 || ExactDelta(mu, 0) <= delta {
		return 0
	}
	hi := 1.0
	for ExactDelta(mu, hi) > delta {
		hi *= 2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	lo := hi / 2
	for ExactDelta(mu, lo) <= delta {
		lo /= 2
		if lo < 1e-300 {
			return lo * 2
		}
	}
	// Invariant: δ(lo) > delta ≥ δ(hi).
	for range exactMaxIter {
		mid := math.Sqrt(lo * hi) // bisection in log space
		if mid <= lo || mid >= hi {
			break
		}
		if ExactDelta(mu, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// exactMaxMu2 is the largest μ² (up to bisection resolution, rounding down)
// with ExactEpsilon(μ, delta) ≤ eps, that is ExactDelta(μ, eps) ≤ delta;
// δ(ε) grows with μ at fixed ε.
func exactMaxMu2(eps, delta float64) float64 {
	if eps < 0 {
		return 0
	}
	hi := 1.0
	for ExactDelta(hi, eps) <= delta {
		hi *= 2
		if hi > 1e150 {
			return math.Inf(1)
		}
	}
	lo := hi / 2
	for ExactDelta(lo, eps) > delta {
		lo /= 2
		if lo < 1e-150 {
			return 0
		}
	}
	// Invariant: δ(lo) ≤ delta < δ(hi).
	for range exactMaxIter {
		mid := math.Sqrt(lo * hi)
		if mid <= lo || mid >= hi {
			break
		}
		if ExactDelta(mid, eps) <= delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo * lo
}
