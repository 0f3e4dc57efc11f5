package spectral

import (
	"fmt"
	"math"
)

// KernelFloor is the eigenvalue floor LowPassKernel is meant to be called
// with. Computed zero eigenvalues come out as ±1e-15 or so, while the
// smallest non-zero eigenvalue of a normalized Laplacian of any graph
// graphfed handles is many orders above 1e-9 (Gowalla's is 0.012), so the
// floor separates "zero" from "small" without moving real values.
const KernelFloor = 1e-9

// LowPassKernel returns LPSFed's low-pass convolution kernel distribution
// (Eq. 6 and 16): K(i) = λ_i / Σ_{q≤Φ} λ_q over the Φ lowest eigenvalues
// λ (any order; the kernel follows it) of a normalized Laplacian.
//
// Zero eigenvalues. λ_1 = 0 for every graph, once per component, so the
// plain kernel has zeros and the KL divergence of Eq. 11 can be infinite
// (a client with more components than the reference). The paper's
// analysis (Appendix B, Eq. 45) replaces zero coordinates by max(q_i, ε);
// here every eigenvalue is floored first, λ_i ← max(λ_i, floor), and then
// normalized. That is the same ε-smoothing applied to both kernels, and it
// keeps each kernel a proper distribution with full support: KL is then
// finite, non-negative and zero exactly for equal kernels. An all-zero
// spectrum (Φ components or more) gives the uniform kernel.
//
// Eigenvalues must be finite and in [−1e-6, 2+1e-6] (a little rounding
// outside [0, 2] is tolerated and clipped); floor must be positive.
func LowPassKernel(lambda []float64, floor float64) ([]float64, error) {
	if len(lambda) == 0 {
		return nil, fmt.Errorf("spectral: low-pass kernel: no eigenvalues")
	}
	if !(floor > 0) || math.IsInf(floor, 1) {
		return nil, fmt.Errorf("spectral: low-pass kernel: floor %v, want finite and positive", floor)
	}
	const slack = 1e-6
	k := make([]float64, len(lambda))
	var sum float64
	for i, l := range lambda {
		if math.IsNaN(l) || l < -slack || l > 2+slack {
			return nil, fmt.Errorf("spectral: low-pass kernel: eigenvalue %d is %v, want in [0, 2]", i, l)
		}
		k[i] = max(min(l, 2), floor)
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	return k, nil
}

// KL returns the Kullback–Leibler divergence D_KL(p ‖ q) = Σ p_i·log(p_i/q_i)
// (LPSFed Eq. 11 with p = K^R, the reference kernel, and q = K^c). Both
// must be distributions of the same length: finite, non-negative, summing
// to 1 within 1e-6. Terms with p_i = 0 contribute 0; a q_i = 0 where
// p_i > 0 makes the divergence infinite and is an error (kernels from
// LowPassKernel never have zeros). Rounding can leave a result of −1e-17
// for equal inputs; it is returned as 0.
func KL(p, q []float64) (float64, error) {
	if len(p) == 0 || len(p) != len(q) {
		return 0, fmt.Errorf("spectral: kl: distributions of lengths %d and %d, want equal and non-zero", len(p), len(q))
	}
	for _, d := range []struct {
		name string
		v    []float64
	}{{"p", p}, {"q", q}} {
		var sum float64
		for i, x := range d.v {
			if !(x >= 0) || math.IsInf(x, 1) {
				return 0, fmt.Errorf("spectral: kl: %s[%d] = %v, want finite and non-negative", d.name, i, x)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-6 {
			return 0, fmt.Errorf("spectral: kl: %s sums to %v, want 1", d.name, sum)
		}
	}
	var d float64
	for i, pi := range p {
		if pi == 0 {
			continue
		}
		if q[i] == 0 {
			return 0, fmt.Errorf("spectral: kl: q[%d] = 0 where p[%d] = %v: divergence is infinite", i, i, pi)
		}
		d += pi * math.Log(pi/q[i])
	}
	return max(d, 0), nil
}

// MinMaxNormalize turns the divergences ρ_c of C clients into LPSFed's
// personalization weights (Eq. 12): ρ̄_c = 1 − (ρ_c − min ρ)/(max ρ − min ρ),
// 1 for the client closest to the reference and 0 for the farthest.
//
// When all ρ are equal (max − min at most 1e-12·max(1, |max|), which
// includes a single client) there is no structural signal to personalize
// on and every weight is 1: θ^c ← θ̄·1 + θ^c·0 is then plain FedAvg.
func MinMaxNormalize(rho []float64) ([]float64, error) {
	if len(rho) == 0 {
		return nil, fmt.Errorf("spectral: min-max normalize: no values")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for c, r := range rho {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("spectral: min-max normalize: value %d is %v, want finite", c, r)
		}
		lo, hi = min(lo, r), max(hi, r)
	}
	out := make([]float64, len(rho))
	span := hi - lo
	if span <= 1e-12*max(1, math.Abs(hi)) {
		for c := range out {
			out[c] = 1
		}
		return out, nil
	}
	for c, r := range rho {
		out[c] = 1 - (r-lo)/span
	}
	return out, nil
}
