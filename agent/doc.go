// Package agent is one organisation in a federated job: it holds its local
// data, trains on it, and publishes what the algorithm shares (model
// parameters, gradient estimators, boundary embeddings, margins) on the
// bus, round by round, every value through its privacy gate.
//
// Machine is the one core, a pure state machine over every channel; Agent
// drives it over a bus.Transport, and the deterministic simulator drives
// it next to aggregator.Machine; wire.go converts between the machine's
// events and actions and the bus messages. What is learned is behind the
// learner.Learner interface, with the optional capabilities of package
// learner found by type assertion; the learners live beside their
// algorithms (learner/node, cefedgnn, lpsfed, fedgsp, aml/amllearner).
// LogisticLearner, logistic regression on seeded synthetic data, is the
// machine's test double and the deterministic simulator's model.
package agent
