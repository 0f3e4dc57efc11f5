// Package deploy builds a job's parties from options: an aggregator or an
// agent with its transport, privacy gate and ledger, signing and durable
// mode. Every entry point (graphfed sim, agent, aggregator, the scenarios)
// is meant to build its parties here, so that signing, durability and
// permissions reach every algorithm at once and what the simulation runs
// is what a bank deploys.
//
// Local is a job's NATS environment on one machine: an embedded server,
// plain or Secure (fresh keys, a keyring and per-party permissions in a
// temporary directory, enforced by the server), or an external URL.
//
// Options are plain values a CLI fills from flags; Validate says what is
// wrong with them in words a user can act on (a σ that is not positive, a
// task without that algorithm). Algorithm semantics live here, not in the
// CLI: "no embedding exchange" is the algorithm fedavg, never a negative σ.
package deploy
