package job

import (
	"fmt"
	"io"

	"graphfed/deploy"
	"graphfed/privacy"
)

// EpsilonSpec is `graphfed privacy epsilon`: the ε(δ) of Releases
// Gaussian releases with noise Sigma per coordinate of a value at metric
// distance (or sensitivity) Rho, one cell of CE-FedGNN Table 6.
type EpsilonSpec struct {
	Sigma, Rho, Delta float64
	Releases          int
	Accountant        string // rdp or exact
}

// DefaultEpsilonSpec is a job's δ under the RDP accountant; Sigma, Rho
// and Releases have no default.
func DefaultEpsilonSpec() EpsilonSpec {
	return EpsilonSpec{Delta: deploy.DefaultDelta, Accountant: privacy.RDP.String()}
}

// EpsilonResult is the composition a spec gives, under the accountant
// Kind.
type EpsilonResult struct {
	Spec EpsilonSpec
	Kind privacy.AccountantKind
	privacy.Composition
}

// Epsilon composes the spec's releases (privacy.EpsilonForSigma).
func Epsilon(s EpsilonSpec) (EpsilonResult, error) {
	kind, err := privacy.ParseAccountantKind(s.Accountant)
	if err != nil {
		return EpsilonResult{}, err
	}
	c, err := privacy.EpsilonForSigma(s.Sigma, s.Delta, s.Rho, s.Releases, kind)
	if err != nil {
		return EpsilonResult{}, fmt.Errorf("privacy epsilon: %w", err)
	}
	return EpsilonResult{Spec: s, Kind: kind, Composition: c}, nil
}

// Metrics are the result's --json metrics (rdp_order under RDP only).
func (r EpsilonResult) Metrics() map[string]any {
	m := map[string]any{"epsilon": r.Epsilon, "mu": r.Mu, "releases": r.Spec.Releases, "sigma": r.Spec.Sigma, "rho": r.Spec.Rho}
	if r.Kind == privacy.RDP {
		m["rdp_order"] = r.RDPOrder
	}
	return m
}

// Privacy is the result's privacy claim, as a report carries it.
func (r EpsilonResult) Privacy() map[string]any {
	return map[string]any{"delta": r.Spec.Delta, "epsilon": r.Epsilon, "accountant": r.Kind.String()}
}

// WriteText writes the result's human line.
func (r EpsilonResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s accountant: %d releases, σ=%g, ρ=%g (μ=%.6g): ε=%.6f at δ=%g\n",
		r.Kind, r.Spec.Releases, r.Spec.Sigma, r.Spec.Rho, r.Mu, r.Epsilon, r.Spec.Delta)
	return err
}
