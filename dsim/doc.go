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
package dsim
