package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"graphfed/deploy"
	"graphfed/job"
)

// privacyFlags are the gate settings sim and agent share, bound into
// job.Privacy; every default is the library's (zero or nil: unset).
type privacyFlags struct{ p job.Privacy }

func (pf *privacyFlags) register(f *pflag.FlagSet) {
	p, d := &pf.p, deploy.DefaultPrivacy()
	f.Float64Var(&p.Delta, "delta", deploy.DefaultDelta, "privacy δ")
	f.Float64Var(&p.BudgetEpsilon, "budget-eps", 0, "per-client ε budget for model updates; 0: none")
	f.Var(positive(&p.ModelSigma, "model σ1"), "model-sigma", fmt.Sprintf("Gaussian noise σ1 on model updates (default %g)", d.ModelSigma))
	f.Var(positive(&p.ModelClip, "model clip"), "model-clip", fmt.Sprintf("L2 clip norm of released model parameters, a binding clip is logged (default %g)", d.ModelClip))
	f.Var(positive(&p.GradSigma, "gradient σ2"), "grad-sigma", fmt.Sprintf("σ2 on gradient estimators, cefedgnn and fedgnn-st (default %g)", d.GradSigma))
	f.Var(positive(&p.EmbSigma, "embedding σ0"), "emb-sigma", fmt.Sprintf("σ0 on normalized boundary embeddings, cefedgnn and fedgnn-st (default %g); for aml a fixed σ0 instead of the node target", d.EmbSigma))
	f.Var(positive(&p.DescSigma, "descriptor σ"), "desc-sigma", fmt.Sprintf("Gaussian σ on FedGSP's descriptor rows, unit principal directions released once per client (default %g)", d.DescriptorSigma))
	f.StringVar(&p.Accountant, "accountant", "", "privacy accountant: rdp or exact (default: exact under a node target, rdp otherwise)")
	f.Var(unsetFloat(&p.NodeTarget), "target-epsilon", fmt.Sprintf("aml with cefedgnn or fedgnn-st: per-node ε target for boundary embeddings at the 90th-percentile metric distance ρ "+
		"(δ = --delta, exact accountant, over the run's planned releases); σ0 is derived from it and the gate refuses releases that would overspend. "+
		"0 or negative: no target, σ0 from --emb-sigma (default %g, or none when --emb-sigma is given)", float64(deploy.DefaultAMLNodeTarget)))
}
