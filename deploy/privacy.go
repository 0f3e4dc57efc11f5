package deploy

import (
	"errors"
	"fmt"
	"math"

	"graphfed/agent"
	"graphfed/privacy"
)

// DefaultDelta is the δ of a job's budgets and reports unless set.
const DefaultDelta = 1e-4

// PrivacyOptions are one agent's gate settings. Start from DefaultPrivacy:
// every σ and clip must be positive, so the zero value does not validate.
type PrivacyOptions struct {
	Delta         float64 // δ in (0, 1)
	BudgetEpsilon float64 // per-client ε cap on the model channel; 0: none
	Accountant    string  // "rdp" (also when empty) or "exact"
	ModelSigma    float64 // σ1 on released model parameters
	ModelClip     float64 // L2 clip of released model parameters (and gradient estimators)
	GradSigma     float64 // σ2 on gradient estimators (cefedgnn, fedgnn-st)
	EmbSigma      float64 // σ0 on normalized boundary embeddings (cefedgnn, fedgnn-st)
	// DescriptorSigma is σ on FedGSP's descriptor rows (unit principal
	// directions, released once per client).
	DescriptorSigma float64
	// NodeTarget, when positive, is a per-node ε target for boundary
	// embeddings at the NodeTargetQ-th percentile metric distance: the
	// gate holds it at the distance measured before each release and
	// chooses σ0 (replacing EmbSigma) to spend it over EmbReleases planned
	// releases (privacy/target.go). Zero: no node budget, σ0 = EmbSigma.
	NodeTarget  float64
	EmbReleases int
	// NoiseSeed fixes this party's noise (reproducible runs, marked
	// non-private in the ledger); nil draws it from crypto/rand. A job of
	// several parties gives each its own (seeds.Party, stream seeds.Noise).
	NoiseSeed *uint64
	// LedgerPath is a file ledger (fsynced); empty: the job's JetStream
	// ledger stream on the party's connection.
	LedgerPath string
}

// NodeTargetQ is the percentile of the metric distance a node target is
// stated and held at (CE-FedGNN's headline 90th).
const NodeTargetQ = 90

// DefaultAMLNodeTarget is the AML main job's per-node ε target (δ =
// DefaultDelta, exact accountant): private by default.
const DefaultAMLNodeTarget = 8

// DefaultPrivacy is CE-FedGNN's σ1, σ2 and σ0, graphfed's model clip, RDP
// accounting at δ = DefaultDelta, no budget cap, noise from crypto/rand and
// the JetStream ledger.
func DefaultPrivacy() PrivacyOptions {
	return PrivacyOptions{Delta: DefaultDelta, Accountant: "rdp",
		ModelSigma: agent.DefaultModelSigma, ModelClip: agent.DefaultModelClip,
		GradSigma: agent.DefaultGradSigma, EmbSigma: agent.DefaultEmbSigma, DescriptorSigma: agent.DefaultDescriptorSigma}
}

// Validate checks the settings one by one and reports every problem.
func (p PrivacyOptions) Validate() error {
	var errs []error
	positive := func(name, flag string, v float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, fmt.Errorf("%s (--%s) is %v; it must be a finite positive number", name, flag, v))
		case v <= 0:
			errs = append(errs, fmt.Errorf("%s (--%s) is %g; it must be positive", name, flag, v))
		}
	}
	if math.IsNaN(p.Delta) || p.Delta <= 0 || p.Delta >= 1 {
		errs = append(errs, fmt.Errorf("δ (--delta) is %g; it must be in (0, 1)", p.Delta))
	}
	if math.IsNaN(p.BudgetEpsilon) || math.IsInf(p.BudgetEpsilon, 0) || p.BudgetEpsilon < 0 {
		errs = append(errs, fmt.Errorf("ε budget (--budget-eps) is %g; it must be 0 (no cap) or positive", p.BudgetEpsilon))
	}
	switch {
	case math.IsNaN(p.NodeTarget) || math.IsInf(p.NodeTarget, 0) || p.NodeTarget < 0:
		errs = append(errs, fmt.Errorf("node ε target (--target-epsilon) is %g; it must be 0 (none) or positive", p.NodeTarget))
	case p.NodeTarget > 0 && p.EmbReleases < 1:
		errs = append(errs, fmt.Errorf("a node ε target needs the planned embedding releases, got %d", p.EmbReleases))
	}
	if _, err := p.accountant(); err != nil {
		errs = append(errs, fmt.Errorf("accountant (--accountant) %q is unknown; want rdp or exact", p.Accountant))
	}
	positive("model σ1", "model-sigma", p.ModelSigma)
	positive("model clip", "model-clip", p.ModelClip)
	positive("gradient σ2", "grad-sigma", p.GradSigma)
	positive("descriptor σ", "desc-sigma", p.DescriptorSigma)
	if p.EmbSigma < 0 && !math.IsInf(p.EmbSigma, 0) {
		// The old "σ0 = -1 means no exchange" convention silently turned
		// CE-FedGNN into FedAvg.
		errs = append(errs, fmt.Errorf("embedding σ0 (--emb-sigma) is %g; it must be positive. "+
			"A negative σ0 no longer switches the embedding exchange off: for a run without exchange choose --algo fedavg", p.EmbSigma))
	} else {
		positive("embedding σ0", "emb-sigma", p.EmbSigma)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deploy: privacy options: %w", err)
	}
	return nil
}

// Budget is the gate's budget: BudgetEpsilon per client and, with a node
// target, a per-node budget held at the measured NodeTargetQ-th percentile
// distance, at the worst case ρ = 2 until the first calibration.
func (p PrivacyOptions) Budget() privacy.Budget {
	b := privacy.Budget{Epsilon: p.BudgetEpsilon}
	if p.NodeTarget > 0 {
		b.NodeEpsilon, b.NodeRho, b.NodeQ, b.NodeReleases = p.NodeTarget, 2, NodeTargetQ, p.EmbReleases
	}
	return b
}

// accountant parses the accountant's name; empty is RDP.
func (p PrivacyOptions) accountant() (privacy.AccountantKind, error) {
	if p.Accountant == "" {
		return privacy.RDP, nil
	}
	return privacy.ParseAccountantKind(p.Accountant)
}
