package job

import (
	"fmt"
	"math"

	"graphfed/deploy"
	"graphfed/privacy"
)

// Privacy is what a job asks of its gates. The zero value is the task's
// private default: for an AML job whose algorithm releases boundary
// embeddings (cefedgnn, fedgnn-st), ε = deploy.DefaultAMLNodeTarget per
// node at the 90th-percentile metric distance, with the exact accountant
// at δ = deploy.DefaultDelta; other jobs get the gates' default noise
// under the RDP accountant.
type Privacy struct {
	Delta         float64 // 0: deploy.DefaultDelta
	BudgetEpsilon float64 // per-client ε cap on the model channel; 0: none
	// Accountant is "rdp" or "exact"; "": exact under a node target, rdp
	// otherwise.
	Accountant string
	// NodeTarget is the per-node ε target of AML embedding releases. nil:
	// the default target, unless EmbSigma is set (a fixed σ0 instead);
	// zero or negative: none.
	NodeTarget *float64
	// σ and clips; 0: deploy.DefaultPrivacy's.
	EmbSigma, ModelSigma, ModelClip, GradSigma, DescSigma float64
	// NoiseSeed fixes the noise (reproducible, marked non-private); nil:
	// crypto/rand.
	NoiseSeed *uint64
}

// resolve is p for a job of task under algo with releases planned AML
// embedding releases: the gates' settings, node target decided, checked
// before any data is loaded.
func (p Privacy) resolve(task, algo string, releases int) (SimPrivacy, error) {
	sp := SimPrivacy{Delta: p.Delta, Budget: privacy.Budget{Epsilon: p.BudgetEpsilon}, ModelSigma: p.ModelSigma,
		ModelClip: p.ModelClip, GradSigma: p.GradSigma, EmbSigma: p.EmbSigma, DescSigma: p.DescSigma, NoiseSeed: p.NoiseSeed}
	if sp.Delta == 0 {
		sp.Delta = deploy.DefaultDelta
	}
	var target float64
	switch t := p.NodeTarget; {
	case task != deploy.TaskAML || !deploy.ExchangesEmbeddings(algo):
		if t != nil && *t > 0 {
			return sp, fmt.Errorf("job: privacy: --target-epsilon (a node ε target) applies to AML jobs with cefedgnn or fedgnn-st (embedding releases), not %s/%s", task, algo)
		}
	case t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0)):
		return sp, fmt.Errorf("job: privacy: --target-epsilon is %v; want a finite number (0: none)", *t)
	case t != nil && *t > 0 && p.EmbSigma != 0:
		return sp, fmt.Errorf("job: privacy: --emb-sigma and --target-epsilon %g both choose σ0: give one (--target-epsilon 0 for a fixed σ0)", *t)
	case t != nil:
		target = max(*t, 0)
	case p.EmbSigma == 0:
		target = deploy.DefaultAMLNodeTarget
	}
	acc := p.Accountant
	if acc == "" {
		acc = privacy.RDP.String()
		if target > 0 {
			acc = privacy.Exact.String()
		}
	}
	kind, err := privacy.ParseAccountantKind(acc)
	if err != nil {
		return sp, fmt.Errorf("job: privacy: %w", err)
	}
	sp.Accountant = kind
	if target > 0 {
		sp.NodeTarget, sp.EmbReleases = target, releases
	}
	if _, err := sp.options(0); err != nil {
		return sp, fmt.Errorf("job: privacy: %w", err)
	}
	return sp, nil
}

// forRun is resolve for a simulated run: the noise seeded with the job's
// seed when one was given (unless NoiseSeed says otherwise), and the
// ledger exported to the run directory out, if any.
func (p Privacy) forRun(task, algo string, releases int, noise *uint64, out string) (SimPrivacy, error) {
	if p.NoiseSeed == nil {
		p.NoiseSeed = noise
	}
	sp, err := p.resolve(task, algo, releases)
	if err != nil {
		return sp, err
	}
	if out != "" {
		sp.ExportLedger = runLedgerPath(out)
	}
	return sp, nil
}
