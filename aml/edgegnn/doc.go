// Package edgegnn is the edge-classification GNN of the AML task: models
// that label transactions (edges) of an amlworld.Graph from the
// structure around them, after Multi-GNN (Egressy et al. 2024).
//
// It holds the edge and node input features (EdgeFeatures, NodeFeatures,
// Featurizer, the optional port and time-delta columns), the sampled
// computation graph of a seed batch (Index, Sampler, Batch: fan-out
// neighbour sampling over the edges visible at a stage), the model (Model:
// encoders, GIN, GraphSAGE-mean or GCN message passing in both directions
// with edge updates, the edge head; hand-written backward passes, the
// embedding overrides through which a federated bank mixes in the
// releases of other banks), stratified seed streams with logit adjustment
// (SeedStream, MarginShift), thresholds and the decision grid the pooled
// operating point is chosen on (DecisionGrid, GridCounts,
// PooledThreshold), bounded evaluation samples (EvalSample), shared work
// buffers (Workers) and the centralised baseline (TrainClassifier).
//
// Tensors, kernels, parameters and optimizers are package gnn's, and its
// conventions hold here: shapes in doc comments, shape errors panic,
// models own the tensors they return, results do not depend on the number
// of CPUs, nothing is safe for concurrent use.
package edgegnn
