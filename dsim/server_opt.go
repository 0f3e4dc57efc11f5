package dsim

import "graphfed/aggregator"

// serverOptOf is a seed's server optimizer (issue 32), with Flower's
// defaults (aggregator.DefaultServerOpt): on the FedAvg and CE-FedGNN
// seeds of every eighth block of three consecutive seeds ((seed/3)%8 == 5:
// seeds 15-16, 39-40, 63-64, ...), the rule turning over from block to
// block, so that the invariants every seed is held to (determinism, a
// restored aggregator continuing exactly, every update counted once)
// cover the optimizers' moments in the snapshot. The blocks are neither
// FedGSP's ((seed/3)%4 == 3) nor the secure ones ((seed/3)%8 == 2): a
// secure seed's checker holds the published model to the survivors' mean
// (InvSecureSum), which an optimizer's step is not. Every other seed keeps
// the job, trace and golden file it had before the optimizers joined.
func serverOptOf(seed uint64, c Config) aggregator.ServerOpt {
	if (seed/3)%8 != 5 || c.SecAgg || (c.Strategy() != StrategyFedAvg && c.Strategy() != StrategyCEFedGNN) {
		return aggregator.ServerOpt{}
	}
	rules := aggregator.ServerOptRules()
	return aggregator.DefaultServerOpt(rules[(seed/24)%uint64(len(rules))])
}
