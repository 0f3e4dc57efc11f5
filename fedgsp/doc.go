// Package fedgsp is the client side of FedGSP (W. Yu 2025, "Homophily
// Heterogeneity Matters in Graph Federated Learning: A Spectrum Sharing and
// Complementing Perspective"; appendix and the authors' code as summarised
// in shared/papers/fedgsp_summary.md, whose numbered decisions it follows).
//
// A client m with subgraph G_m and features X (row-normalised when
// non-negative, as NormalizeFeatures does):
//
//  1. ĥ: edge homophily over train–train edges (0.75 when there is none,
//     decision 3); θ = π/2·(1 − ĥ). P = D^{-1/2} A D^{-1/2} over the
//     symmetrised graph without self loops (propagate.go).
//  2. Homophily bases HM_k = P^k X and heterophily bases U_k from the
//     appendix's Algorithm 1, per feature column (decisions 1–2), any two of
//     which meet at θ (bases.go).
//  3. Mixed inputs B_0 = X, B_k = τ·HM_k + (1−τ)·U_k, computed once and kept
//     as float32 for the labelled rows only, ordered train | val | test.
//  4. Model: z = Σ_k c_k ⊙ dropout_C(B_k), c_k ∈ R^d initialised to 1/(K+1),
//     then an MLP of Dense layers (ReLU, dropout_M, residual when square);
//     softmax cross-entropy on the training nodes, two classes for the
//     binary datasets (ROC-AUC from p(class 1)); two Adam groups, MLP
//     (LR1, WD1) and coefficients (LR2, WD2), with PyTorch's L2 weight
//     decay (model.go, learner.go).
//  5. Each Train: full-batch steps, then the locally updated model is scored
//     on val and test, keeping the test score at the best val score
//     (decision 8's protocol; eval.go).
//  6. Descriptors: the top-Principal principal directions of each HM_k, each
//     U_k and of [HM_1..HM_K], [U_1..U_K], released once (decision 7;
//     descriptor.go, pca.go, learner_release.go).
//
// Parameters are flat as the contract fixes: [c_0 | … | c_K | MLP], so the
// server mixes the first (K+1)·d values order by order.
//
// Departures, each with its reason at the code: every Dense layer has a
// bias (the authors' has none by default); the Lanczos vectors of Alg. 1
// are re-orthogonalised and a column whose Krylov space is exhausted keeps
// V_k = 0 (both exact-arithmetic no-ops, needed for the θ property in
// float64); ROC-AUC over a single-class split is NaN (undefined).
//
// The package satisfies learner.Learner and learner.DescriptorReleaser;
// it imports neither agent nor bus. All backward passes are
// hand-written and checked against finite differences in the tests.
package fedgsp
