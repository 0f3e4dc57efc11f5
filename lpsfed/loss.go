package lpsfed

import "math"

// Losses on scores. Each returns the batch-mean loss and sets the
// gradients with respect to its inputs; the model chains them to the
// parameters.

// infoNCE is −(1/B)·Σ_b log softmax_0([pos_b, neg_b1, …, neg_bK]/τ), the
// form of both the bias loss (Eq. 7) and the BC loss (Eq. 9): positive b
// against its K negatives neg[b·K:(b+1)·K]. dPos and dNeg receive the
// gradients.
func infoNCE(pos, neg []float64, k int, tau float64, dPos, dNeg []float64) float64 {
	inv := 1 / float64(len(pos))
	terms := make([]float64, len(pos))
	// Per positive in parallel; the terms are summed in order after.
	parallelFor(len(pos), parts(len(pos), 16*(k+1)), func(lo, hi int) {
		for b := lo; b < hi; b++ {
			p := pos[b]
			ng := neg[b*k : (b+1)*k]
			// log-sum-exp shifted by the largest logit.
			m := p
			for _, v := range ng {
				m = max(m, v)
			}
			z := math.Exp((p - m) / tau)
			for _, v := range ng {
				z += math.Exp((v - m) / tau)
			}
			lse := m/tau + math.Log(z)
			terms[b] = lse - p/tau
			dPos[b] = inv * (math.Exp(p/tau-lse) - 1) / tau
			for j, v := range ng {
				dNeg[b*k+j] = inv * math.Exp(v/tau-lse) / tau
			}
		}
	})
	var loss float64
	for _, t := range terms {
		loss += t
	}
	return loss * inv
}

// bpr is the BPR loss (Rendle et al. 2009) averaged over every
// (positive, negative) pair: (1/BK)·Σ_b Σ_j softplus(−(pos_b − neg_bj)).
func bpr(pos, neg []float64, k int, dPos, dNeg []float64) float64 {
	inv := 1 / float64(len(neg))
	terms := make([]float64, len(neg))
	// Per positive in parallel; the terms are summed in order after.
	parallelFor(len(pos), parts(len(pos), 16*k), func(lo, hi int) {
		for b := lo; b < hi; b++ {
			p := pos[b]
			dPos[b] = 0
			for j := range k {
				x := p - neg[b*k+j]
				terms[b*k+j] = softplus(-x)
				g := inv * sigmoid(-x) // −∂softplus(−x)/∂x
				dPos[b] -= g
				dNeg[b*k+j] = g
			}
		}
	})
	var loss float64
	for _, t := range terms {
		loss += t
	}
	return loss * inv
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// angleOf is R̂ = arccos(tanh(s)) (Eq. 5) and its sine, sin R̂ = sech(s),
// computed without the cancellation of sqrt(1 − tanh²).
func angleOf(s float64) (r, sin float64) {
	return math.Acos(math.Tanh(s)), 1 / math.Cosh(s)
}

// margin is Eq. 8, M = min(γ·ξ̂, π − R̂), with the branch taken: true when
// π − R̂ is the smaller (the margin then moves with R̂).
func margin(gamma, xi, r float64) (float64, bool) {
	if a, b := gamma*xi, math.Pi-r; b < a {
		return b, true
	}
	return gamma * xi, false
}

// bcPositive is the BC loss's positive logit cos(R̂ + M̃) with the refined
// margin M̃ = ω·global + (1−ω)·M (Eq. 15; M̃ = M before the first global
// margin arrives), and its derivative with respect to s; m is the local
// margin M (Eq. 8), returned for M^c. The angle is clamped at π, where cos
// stops decreasing: beyond it a larger R̂ would raise the logit. ξ̂ is a
// constant here (the popularity encoders learn from the bias loss alone);
// the R̂ branch of the min is differentiated.
//
// Where Eq. 8's guard binds (γ·ξ̂ ≥ π − R̂, or R̂ + M̃ ≥ π), the logit is
// flat at −1 or nearly so, and a positive that falls there gets no
// gradient and is never ranked up again. With fallback, it takes instead
// ArcFace's fallback (Deng et al. 2019): cos R̂ − m·sin m with m the
// refined margin of the unclipped γ·ξ̂, the first-order expansion of
// cos(R̂ + m) at the guard, which keeps the slope of cos R̂.
func bcPositive(s, xi, gamma, omega, global float64, hasGlobal, fallback bool) (logit, dLogit, m float64) {
	r, sinR := angleOf(s)
	m, followsR := margin(gamma, xi, r)
	w := 1.0 // weight of the local margin in M̃
	mt := m
	if hasGlobal {
		w = 1 - omega
		mt = omega*global + w*m
	}
	theta := r + mt
	if fallback && (followsR || theta >= math.Pi) {
		mr := gamma * xi
		if hasGlobal {
			mr = omega*global + w*mr
		}
		t := math.Tanh(s)
		return t - mr*math.Sin(mr), 1 - t*t, m
	}
	if theta >= math.Pi {
		return -1, 0, m
	}
	// dθ/dR̂ = 1, or 1 − w when M = π − R̂; dR̂/ds = −sin R̂.
	dTheta := 1.0
	if followsR {
		dTheta = 1 - w
	}
	return math.Cos(theta), math.Sin(theta) * dTheta * sinR, m
}
