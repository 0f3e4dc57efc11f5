package deploy

import (
	"graphfed/agent"
	"graphfed/aggregator"
)

// The algorithm, not its caller, decides how a learner trains: FedGNN-ST
// is CE-FedGNN's embedding exchange without the moving-average estimators.
// These helpers are that decision for learners built in memory (the
// simulation); every entry point names the algorithm and nothing else.

// CEFedConfigFor returns c as algo trains it: FedGNN-ST's variant for
// fedgnn-st, CE-FedGNN's otherwise.
func CEFedConfigFor(algo string, c agent.CEFedConfig) agent.CEFedConfig {
	c.Variant = agent.VariantCEFedGNN
	if algo == aggregator.AlgoFedGNNST {
		c.Variant = agent.VariantFedGNNST
	}
	return c
}

// AMLConfigFor returns c as algo trains it. CE-FedGNN and FedGNN-ST
// train with Algorithm 1's update (G ← (1−β)G + β∇, W ← W − ηG) unless
// c.Opt says otherwise, and share G with the aggregator; FedGNN-ST keeps no
// moving averages (γ = β = 1: the latest embeddings and gradient). Every
// other algorithm shares no G, whatever the optimizer.
func AMLConfigFor(algo string, c agent.AMLConfig) agent.AMLConfig {
	switch algo {
	case aggregator.AlgoCEFedGNN, aggregator.AlgoFedGNNST:
		if c.Opt == "" {
			c.Opt = agent.OptCEFed
		}
		c.ShareGrad = true
		if algo == aggregator.AlgoFedGNNST {
			c.Gamma, c.Beta = 1, 1
		}
	default:
		c.ShareGrad = false
	}
	return c
}
