// Package rec is the recommendation workload's data side: a user–item
// dataset in the LightGCN layout cut into the clients of a federated job
// (LPSFed's benchmark, Appendix D.2: users split by spectral clustering of
// the training graph), each client written to and read back from a
// LightGCN directory of its own, and a client's low-pass preparation (its
// Φ lowest eigenpairs and kernel) computed from that client's data alone.
// The simulation and a deployed agent prepare a client with the same
// function, so that both train on the same input.
package rec
