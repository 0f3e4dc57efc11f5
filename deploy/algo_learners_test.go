package deploy

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
)

// Only the algorithms whose strategy averages G share it; FedGNN-ST keeps
// no moving averages, nor does an algorithm that exchanges nothing; an
// explicit optimizer is kept.
func TestAMLConfigFor(t *testing.T) {
	base := DefaultAMLConfig()
	for _, tc := range []struct {
		algo, opt   string
		wantOpt     string
		share       bool
		gamma, beta float64
	}{
		{aggregator.AlgoCEFedGNN, "", "", true, base.Gamma, base.Beta},
		{aggregator.AlgoCEFedGNN, amllearner.OptCEFed, amllearner.OptCEFed, true, base.Gamma, base.Beta},
		{aggregator.AlgoCEFedGNN, amllearner.OptAdam, amllearner.OptAdam, true, base.Gamma, base.Beta},
		{aggregator.AlgoFedGNNST, "", "", true, 1, 1},
		{aggregator.AlgoFedAvg, "", "", false, 1, base.Beta},
		{aggregator.AlgoFedAvg, amllearner.OptCEFed, amllearner.OptCEFed, false, 1, base.Beta},
		{aggregator.AlgoLocal, "", "", false, 1, base.Beta},
	} {
		c := base
		c.Opt, c.ShareGrad = tc.opt, true
		got := AMLConfigFor(tc.algo, c)
		if got.Opt != tc.wantOpt || got.ShareGrad != tc.share || got.Gamma != tc.gamma || got.Beta != tc.beta {
			t.Errorf("%s/%q: opt %q share %v γ %v β %v, want %q %v %v %v", tc.algo, tc.opt, got.Opt, got.ShareGrad, got.Gamma, got.Beta,
				tc.wantOpt, tc.share, tc.gamma, tc.beta)
		}
	}
}
