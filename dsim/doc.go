// Package dsim is the deterministic simulation of what ships: the
// aggregator's machine with every strategy (FedAvg with its staleness
// policies and FedBuff, CE-FedGNN with boundary embeddings, LPSFed with
// its reference kernel, ρ, margins and personalized models, FedGSP with
// descriptors released once per client and collaboration graphs) and one
// agent machine per client, on a seeded network and clock, without NATS.
//
// Every message is envelope bytes: the sender seals it through its
// bus.Endpoint, the receiver opens it through its own, with its
// validator, and the bodies become machine events (and actions become
// bodies) through the same functions the NATS drivers use
// (aggregator.EventOf, ServerConfig.Outbound, agent.EventOf,
// agent.Outbound, ...). A seeded event queue decides when every message
// arrives, whether it arrives at all or twice, and when parties are cut
// off, crash (also in the middle of a step) and restart. After every step
// the invariants are checked (check.go, check_release.go). Everything that
// varies is drawn from the seed, so a failure reproduces from its seed
// alone, and its readable trace (trace.go) can be written again at will.
//
// One seed in eight (secureSeed) runs FedAvg, CE-FedGNN or LPSFed with
// secure aggregation on (secure.go): the aggregator with
// aggregator.Config.SecAgg and the agents' clip as its contract, every
// agent with an agent.SecAggConfig whose NKeys and ChaCha8 stream are
// drawn from the seed, the protocol's six subjects routed through the
// same codec, validators and faults as the rest. After every step the
// secure invariants are checked (check_secure.go): a sum's weight slot
// equals its survivors' weights exactly and its mean is within the
// encoding's rounding bound of the mean of what their gates released (read
// by a shadow gate under the same noise seed); the aggregator is never sent
// both kinds of share of a party in a round; no party's input is
// computable from what was sent to it (secagg.Simulate's invariant 5); a
// round with a sum has at least t survivors, one without publishes nothing.
package dsim
