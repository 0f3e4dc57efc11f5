// Package agent is one organisation in a federated job: it holds its local
// subgraph, trains on it, and publishes what the algorithm shares (model
// updates, embeddings, margins) on the bus, round by round. What is
// learned is behind the Learner interface, so the same agent loop runs
// FedAvg and Local on node classification today and CE-FedGNN or LPSFed
// learners later.
package agent
