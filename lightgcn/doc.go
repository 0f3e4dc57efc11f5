// Package lightgcn is a centralized LightGCN recommender (He et al. 2020,
// "LightGCN: Simplifying and Powering Graph Convolution Network for
// Recommendation"), graphfed's baseline for the federated recommenders:
// trained on the whole user–item graph, it separates what LPSFed loses to
// the federated split from what it loses to its model.
//
// The model is the paper's and the official code's (gusye1234/LightGCN-PyTorch):
// one free embedding per user and item (layer 0), K propagation layers
// E_{k+1} = Â·E_k through the symmetrically normalised bipartite adjacency
// Â = D^-1/2·A·D^-1/2, and the final embedding the mean of layers 0..K.
// A user's score of an item is the dot product of their final embeddings.
// Training is BPR with one uniformly sampled negative per positive, L2 on
// the batch's layer-0 embeddings, and Adam over every embedding.
//
// The paper's Adam rate is constant. Config.LRSchedule adds a step
// (MultiStepLR) or cosine decay of it between epochs (schedule.go), for
// the shorter, larger-batch runs a small machine affords: at a constant
// rate those level off at a noise floor below the paper's figure. The
// model, sampler and loss are the same under every schedule.
//
// Nodes are numbered users first: user u is node u, item i node Users+i.
// Embeddings are node-major float32 matrices (nodes × Dim).
//
// Every step propagates the whole graph, as the official code does, so
// the propagation is the cost (propagate.go): the last forward layer
// and the first backward layer only touch the batch's nodes and their
// neighbours, and the backward pass reuses Â, which is symmetric. The
// library never prints; Train reports through a zerolog.Logger it is
// given and stops when its context is cancelled.
package lightgcn
