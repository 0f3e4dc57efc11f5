// Package agent is one organisation in a federated job: it holds its local
// data, trains on it, and publishes what the algorithm shares (model
// parameters, gradient estimators, boundary embeddings, margins) on the
// bus, round by round, every value through its privacy gate.
//
// Machine is the one core, a pure state machine over every channel; Agent
// drives it over a bus.Transport, and the deterministic simulator drives
// it next to aggregator.Machine. What is learned is behind the Learner
// interface, with optional capabilities (exchange.go, capabilities.go):
// node classification (FedAvg, Local), CE-FedGNN and the AML learners
// here, and LPSFed's recommender (lpsfed.Learner) from its own package.
package agent
