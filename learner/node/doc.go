// Package node is the node-classification learner of FedAvg, FedProx,
// FedPer and Local (Learner): a GCN or GraphSAGE model from package gnn,
// trained full-batch with Adam on one client's subgraph (its internal
// edges only), with FedProx's proximal term, FedPer's local head and
// weight decay decoupled from the gradient (step.go). It implements
// learner.Learner; CE-FedGNN's node learner, which exchanges boundary
// embeddings, is package cefedgnn.
package node
