// Package aggregator runs federated rounds. Its core, Machine, is a pure
// deterministic state machine in the style of etcd's raft: Step(event)
// returns actions and does no I/O, reads no clock and starts no goroutine.
// Time enters as fields of events. Server is the thin adapter that feeds it
// events from a bus.Transport and carries its actions out, so that the same
// machine runs over NATS, over the in-memory transport, and under the seeded
// simulator.
package aggregator
