// Package cefedgnn is CE-FedGNN's node-classification learner (seed §3.2,
// Algorithm 1) and its ablation FedGNN-ST (Variant): a two-layer
// GraphSAGE-mean network whose first layer keeps a moving-average
// embedding estimator (model.go), trained on one client's share of a
// graph, exchanging the hidden embeddings of its boundary nodes with the
// clients that host their cross-client neighbours (exchange.go,
// learner.Exchanger) and sharing its gradient estimator with the
// aggregator (learner.GradSharer). The aggregator's side is FedAvg over
// parameters and estimators (package aggregator); the AML learner has a
// CE-FedGNN optimizer of its own (aml/amllearner).
package cefedgnn
