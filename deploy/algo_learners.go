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

// AMLConfigFor returns c as algo trains it: FedGNN-ST releases the latest
// boundary embeddings (γ = 1) instead of their moving average.
func AMLConfigFor(algo string, c agent.AMLConfig) agent.AMLConfig {
	if algo == aggregator.AlgoFedGNNST {
		c.Gamma = 1
	}
	return c
}
