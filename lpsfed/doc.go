// Package lpsfed is the client side of LPSFed (Sim & Park 2026, "Low-pass
// Personalized Subgraph Federated Recommendation"): the low-pass spectral
// recommender each client trains on its user–item subgraph, its losses,
// top-K evaluation, and the client runtime that speaks the LPSFed round
// protocol over the bus, releasing everything through the privacy gate.
//
// The model (paper §2.3 and §3.1, Eq. 3–9):
//
//	Z⁽⁰⁾ = E                                  n×d, n = M users + N items
//	Z⁽ˡ⁾ = P̄·diag(k⁽ˡ⁾)·P̄ᵀ·Z⁽ˡ⁻¹⁾ = P̄·diag(κ_l)·A,  A = P̄ᵀE (Φ×d), κ_l = k⁽¹⁾⊙…⊙k⁽ˡ⁾
//	Z   = tanh(MLP_pool([Z⁽⁰⁾, Z⁽¹⁾, …, Z⁽ᴸ⁾]))  n×d   (Eq. 4)
//	s_ui = MLP_pred([U_u, V_i, U_u⊙V_i]),  R̂_ui = arccos(tanh(s_ui))  (Eq. 5)
//
// P̄ (n×Φ) holds the Φ lowest-frequency eigenvectors of the client's
// normalized Laplacian, so P̄ᵀP̄ = I and every layer is a diagonal filter
// on the same Φ×d spectral coefficients A, computed once per step. The
// first affine map of the pooling MLP is folded into the spectral domain:
// [Z⁽⁰⁾, …, Z⁽ᴸ⁾]·W = E·W₀ + P̄·Σ_l diag(κ_l)·A·W_l, so a batch only
// touches the rows of P̄ it uses (lowpass.go).
//
// Popularity branch (Eq. 7–9, 15): user and item popularity (training
// degree, bucketed on a log scale) are encoded by lookup tables into
// d-dimensional embeddings; their angle ξ̂_ui gives the bias contrastive
// loss and the margin M_ui = min(γ·ξ̂_ui, π − R̂_ui), refined with the
// server's margin as M̃ = ω·M_global + (1−ω)·M_ui inside the bias-aware
// contrastive (BC) loss. The BPR variant drops the popularity branch.
//
// What leaves a client: the pooling and predictive MLP parameters, the
// KL divergence ρ_c between the server's reference kernel and the
// client's own (Eq. 11), and the client's mean margin M^c (Eq. 10), each
// through privacy.Gate. E, the kernels k⁽ˡ⁾, the popularity tables and
// the spectrum stay on the client.
//
// Choices the paper leaves open, and departures from it, each with its
// reason at the code:
//
//   - The MLPs default to single affine maps, as in the authors' code
//     (Config.PoolHidden, PredHidden add hidden layers); k⁽ˡ⁾ starts at 1.
//   - The BC loss takes R̂ of scores centred over each candidate set
//     {i} ∪ N_u (model.go, bcLoss): ranking is unchanged, but without it
//     margins make the loss drift all scores into tanh saturation.
//   - γ defaults to 0.3, not 1 (config.go); the popularity tables start
//     near one common direction (popularity.go).
//   - ξ̂ is a constant of the BC loss: the popularity encoders learn from
//     the bias loss alone.
//   - M^c (Eq. 10) averages M_ui over the training positives of the last
//     local round, as the authors' code does, not over all M·N pairs,
//     whose mean the unobserved pairs would dominate although the loss
//     never applies a margin to them.
//
// Performance (a Gowalla client: 32k nodes, batches of 16k positives and
// 64k negatives). A step's whole-graph products P̄ᵀE, P̄·C, P̄ᵀ·dPre and
// P̄·dA run in package gnn's AVX2/FMA kernels; the pair loops of the
// affine predictor, the popularity branch (once per bucket pair), the
// losses, tanh and the full-ranking evaluation (blocks of users over
// tiles of items, a running top K per user) are split across
// GOMAXPROCS goroutines by pairs, columns or users, never by summand:
// every float is computed by the same operations in the same order as
// the serial code, so results are bit-for-bit the same for any CPU count
// (TestTrainingIndependentOfCPUCount) and the batch paths equal the
// one-pair paths they replace (fast_test.go). BenchmarkTrainStep,
// BenchmarkStepParts and BenchmarkEvaluate report wall and CPU time.
//
// All backward passes are hand-written and checked against finite
// differences in the tests. Shapes follow package gnn: row-major float32,
// node v's vector is row v, users first.
package lpsfed
