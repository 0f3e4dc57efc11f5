package amllearner

import (
	"math/rand/v2"

	"graphfed/gnn"
)

// Narrow releases (Config.ReleaseDims = r < H).
//
// A boundary account's release carries, per layer k, r coordinates
// c_k = B_kᵀ·H̃^k instead of all H, B_k being an H×r matrix with
// orthonormal columns that every bank derives alike from (H, r, k) alone
// (releaseBasis), so nothing about it is exchanged. The receiver lifts the
// decoded coordinates back to B_k·ĉ_k and corrects its own computation of
// the foreign account only within span(B_k) (edgegnn.EmbeddingOverride.Basis),
// keeping its own view in the other H − r directions.
//
// Why: a release is one point of the unit sphere with σ0 Gaussian noise on
// each of its L·(w+1) coordinates (w = H, or r), so its signal share is
// α = 1/(1 + L·(w+1)·σ0²). At the private default (ε = 8 per node at the
// p90 metric distance ρ, σ0 ≈ 0.75–1.3 over 12 releases) a full row of
// L·(H+1) = 66 coordinates keeps 1–3% of its signal, and even the mean of
// all twelve releases (poolRelease) stays under a fifth; 2·(2+1) = 6
// coordinates keep about ten times more. Metric DP helps twice: in fewer
// dimensions accounts also lie closer together, so ρ — and σ0 with it —
// falls.

// releaseBasisSeed fixes the stream every bank draws the bases from.
const releaseBasisSeed = 0x72656c65617365

// releaseBasis returns layer k's H×r basis (orthonormal columns from a
// PCG stream seeded by H, r and k).
func releaseBasis(H, r, k int) *gnn.Tensor {
	return gnn.OrthonormalColumns(rand.New(rand.NewPCG(releaseBasisSeed, uint64(H)<<40|uint64(r)<<20|uint64(k))), H, r)
}

// project writes Bᵀ·h into dst (r values).
func project(dst []float32, b *gnn.Tensor, h []float32) {
	r := b.Cols
	for q := range r {
		var s float32
		for j, x := range h {
			s += b.Data[j*r+q] * x
		}
		dst[q] = s
	}
}

// lift writes B·c into dst (H values).
func lift(dst []float32, b *gnn.Tensor, c []float32) {
	r := b.Cols
	for j := range dst {
		var s float32
		for q, x := range c {
			s += b.Data[j*r+q] * x
		}
		dst[j] = s
	}
}

// releaseWidth is the coordinates a layer's estimate is released with
// (before the norm coordinate): r for narrow releases, else H.
func (l *Learner) releaseWidth() int {
	if l.cfg.ReleaseDims > 0 {
		return l.cfg.ReleaseDims
	}
	return l.cfg.Hidden
}

// releaseEstimate returns the per-layer values released for estimate h
// (L·H): h itself, or each layer projected on its basis (L·r).
func (l *Learner) releaseEstimate(h []float32, L int) []float32 {
	if l.basis == nil {
		return h
	}
	H, r := l.cfg.Hidden, l.cfg.ReleaseDims
	out := make([]float32, L*r)
	for k := range L {
		project(out[k*r:(k+1)*r], l.basis[k], h[k*H:(k+1)*H])
	}
	return out
}
