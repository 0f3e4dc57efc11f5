package privacy

import (
	"fmt"
	"math"
)

// Targets: choosing σ0 from a per-node ε target instead of ε from σ0.
//
// A node released R times with noise σ at metric distance ρ composes to one
// Gaussian mechanism with μ = ρ·sqrt(R)/σ (exact.go). ε(δ) grows with μ,
// so the σ that spends exactly a target ε over R releases is
// σ = ρ·sqrt(R)/μ*, where μ* is the largest μ whose ε at δ is at most the
// target: one bisection on μ in log space (exactMaxMu2, or the closed
// form over the RDP orders), independent of ρ and R.
//
// Which ρ: the node budget is stated at the q-th percentile of the
// metric-DP distance (CE-FedGNN's 90th), and that distance is measured on
// the embeddings themselves (Calibrate), so it is unknown before the first
// release and moves as the model trains (on the AML demo world ρ_90 grows
// from about 0.4 after round 1 to about 0.7 after round 12). The gate
// therefore never relies on a planned ρ for the guarantee: with
// Budget.NodeQ set it re-evaluates the node cap at ρ_q of every
// calibration it records, and the agent records one on each exchange's
// embeddings (their normalized inputs, unreleased yet) just before
// releasing them, so each release is checked at its own ρ and refused if
// it would take any node past the target there (ErrBudgetExceeded: the
// exchange stops, training continues). σ0 is then chosen per release by
// Gate.NodeSigma from the same ρ: what is left of the budget at that ρ,
// spread evenly over the planned releases not yet made. At constant ρ
// this is SigmaForEpsilon's σ for every release; when ρ grows, later
// releases are noisier and the budget is spent exactly by the last one.
// Until a calibration is recorded the cap is held at Budget.NodeRho,
// which a caller without a measurement sets to the worst case 2 (the
// diameter of the unit sphere every released row is normalized onto).
//
// The audit evaluates each client's nodes at that client's latest
// calibration, which under a node budget is the one its gate last held
// (the agent does not recalibrate the same embeddings at the end), so the
// audit's per-node ε at p90 is at most the target.
//
// Caveat: ρ_q is a statistic of the private embeddings and is itself not
// privatized (as in CE-FedGNN); the guarantee is the metric-DP statement
// "for q% of released nodes, indistinguishable from each of their k
// nearest neighbours", not DP against arbitrary neighbouring inputs.

// SigmaForEpsilon is the noise σ per coordinate at which releases
// Gaussian releases of a value at distance rho compose to exactly eps at
// delta under the accountant kind (up to bisection resolution, on the
// safe side: the ε of the returned σ is at most eps).
func SigmaForEpsilon(eps, delta, rho float64, releases int, kind AccountantKind) (float64, error) {
	const op = "sigma for epsilon"
	switch {
	case kind != RDP && kind != Exact:
		return 0, errorf(op, ErrInvalid, "unknown accountant kind "+kind.String())
	case !(eps > 0) || math.IsInf(eps, 1):
		return 0, errorf(op, ErrInvalid, fmt.Sprintf("target ε %v must be positive and finite", eps))
	case !(delta > 0 && delta < 1):
		return 0, errorf(op, ErrInvalid, fmt.Sprintf("delta %v outside (0, 1)", delta))
	case !(rho > 0) || math.IsInf(rho, 1):
		return 0, errorf(op, ErrInvalid, fmt.Sprintf("distance ρ %v must be positive and finite", rho))
	case releases < 1:
		return 0, errorf(op, ErrInvalid, fmt.Sprintf("%d planned releases (want at least 1)", releases))
	}
	mu2 := kind.maxMu2(eps, delta)
	if !(mu2 > 0) {
		return 0, errorf(op, ErrInvalid, fmt.Sprintf("no Gaussian mechanism reaches ε %v at δ %v", eps, delta))
	}
	sigma := rho * math.Sqrt(float64(releases)/mu2)
	// Rounding in the last step may put ε a hair over the target; nudge σ
	// up until it is not.
	for kind.Epsilon(float64(releases)*rho*rho/(sigma*sigma), delta) > eps {
		sigma = math.Nextafter(sigma, math.Inf(1)) * (1 + 1e-12)
	}
	return sigma, nil
}

// MaxMu is μ* = sqrt of the largest Σ ρ²/σ_i² whose ε at delta is at most
// eps: the composition a target allows, whatever ρ and R.
func MaxMu(eps, delta float64, kind AccountantKind) float64 {
	if kind != RDP && kind != Exact {
		return 0
	}
	return math.Sqrt(kind.maxMu2(eps, delta))
}

// PlannedReleases is the number of embedding releases per node of a run of
// rounds rounds releasing every every-th round (1, 1+every, ...): a node
// on every exchange is released ceil(rounds/every) times.
func PlannedReleases(rounds, every int) int {
	if rounds <= 0 {
		return 0
	}
	every = max(every, 1)
	return (rounds + every - 1) / every
}
