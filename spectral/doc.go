// Package spectral is graphfed's spectral toolbox for LPSFed and spectral
// partitioning: symmetric sparse operators on graph.CSR, normalized
// Laplacians of general and user–item bipartite graphs, a block
// thick-restart Lanczos eigensolver for the Φ lowest eigenpairs, low-pass
// kernels and their KL similarity (LPSFed Eq. 6/11/12/16), Erdős–Rényi and
// GNMK reference graphs, and spectral clustering of a user–item graph into
// federated clients (LPSFed Appendix D.2).
//
// Conventions:
//
//   - The normalized Laplacian is L = I − D^-1/2·A·D^-1/2 with D the
//     weighted degree. A node of degree 0 (isolated) has the identity row
//     in L: D^-1/2 is taken as 0 there, as SciPy and NetworkX do, so an
//     isolated node contributes the eigenvalue 1 with its indicator vector.
//     The spectrum of L lies in [0, 2]; eigenvalue 0 has the multiplicity of
//     the number of components with an edge, eigenvalue 2 that of the
//     bipartite ones.
//   - A block of k vectors of length n is stored node-major as an n×k
//     row-major []float64 (row i holds node i's k coordinates), which is
//     what a sparse matrix–block product reads best. Eigenvectors are
//     returned that way too: Eigenpairs.Vectors is N×Φ row-major.
//   - Everything random takes a seed or a *rand.Rand (math/rand/v2), and
//     the parallel kernels split work so that every output is computed by
//     one goroutine with the same arithmetic whatever the number of CPUs:
//     results are bit-for-bit reproducible for a given seed on a given kind
//     of CPU (amd64 CPUs with AVX2 and FMA use vector kernels whose fused
//     rounding differs in the last bits; see simd_amd64.go).
//   - Errors name the operation and the cause ("spectral: lanczos: ...").
//     A shape mismatch in an internal kernel is a programming error and
//     panics.
package spectral
