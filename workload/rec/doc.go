// Package rec is the recommendation workload's data side: a user–item
// dataset in the LightGCN layout cut into the clients of a federated job
// (LPSFed's benchmark, Appendix D.2: users split by spectral clustering of
// the training graph, ±20% interactions across clients, distinct
// partitionings on request), optionally after LPSFed's 8:1:1 per-user
// random holdout with a validation split (holdout.go), each client written
// to and read back from a LightGCN directory of its own (val.txt beside
// train.txt and test.txt), and a client's low-pass preparation (its Φ
// lowest eigenpairs and kernel) computed from that client's data alone.
// The simulation and `graphfed split rec` cut clients with the same Split,
// and the simulation and a deployed agent prepare a client with the same
// function, so that both train on the same input.
package rec
