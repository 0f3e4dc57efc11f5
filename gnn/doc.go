// Package gnn is graphfed's neural-network core: float32 dense tensors and
// the sparse and dense kernels graph neural networks need, message-passing
// layers (GCN, GraphSAGE-mean) with hand-written backward passes, losses,
// optimizers (Adam, SGD), full-batch training and evaluation, and the flat
// parameter vectors that agents exchange in federated rounds.
//
// Conventions:
//
//   - Matrices are row-major; node i's vector is row i. Shapes are stated in
//     doc comments as Rows×Cols, and kernels panic with a "gnn: <op>: shape"
//     message on a mismatch, as gonum's mat does: a shape error is a
//     programming error. Data that comes from outside (a graph, a received
//     parameter vector) is validated and reported as an error instead.
//   - Layers and models own the tensors they return; a returned tensor is
//     valid until the next call of the same method. Buffers are reused
//     across epochs, so a training epoch allocates almost nothing.
//   - Backward passes accumulate into Param.G; ZeroGrad clears them.
//   - Everything random takes a *rand.Rand (math/rand/v2), so runs are
//     seeded and deterministic. Kernels split large products across
//     goroutines either by output rows or into a number of partial sums
//     fixed by the problem size, so results are bit-for-bit the same
//     whatever the number of CPUs.
//   - Nothing here is safe for concurrent use by several goroutines; use
//     one model per goroutine.
//
// The first layer of every model takes the sparse node features, so that
// X·W is a sparse×dense product; this is what makes bag-of-words datasets
// such as Cora fast.
//
// The AML task's edge-classification GNN is package aml/edgegnn, built on
// these tensors, parameters and optimizers and on a few kernels exported
// for it: GatherSparse and ScatterSparse (a sparse row times dense rows),
// MatMulNTWork, Grow, AddInto, NonZero and MaxCompact, ParallelWorkers
// and ParallelSplit (the CPU-count-independent row split), ShapePanic,
// and Dropout's fused ForwardReLU and BackwardReLU.
package gnn
