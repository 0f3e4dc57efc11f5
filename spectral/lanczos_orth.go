package spectral

import (
	"fmt"
	"math"
)

// breakdownTol: a new Lanczos vector whose norm after orthogonalization is
// below breakdownTol times its norm before is numerically in the span of
// the basis (the Krylov space is invariant in that direction). It is
// replaced by a random vector orthogonal to the basis; the dropped
// remainder is far below any residual tolerance we accept.
const breakdownTol = 1e-13

// expand multiplies the residual block F = V[p:j] by the operator,
// orthogonalizes the product against the whole basis, records the
// coefficients in H and appends the orthonormalized product as the new
// residual block.
func (s *krylov) expand() error {
	n, b, p, j, ld := s.n, s.b, s.p, s.j, s.ld
	toNodeMajor(s.x, s.v[p*n:(p+b)*n], b, n)
	s.op.MulBlock(s.y, s.x, b)
	s.matvec += b
	s.iters++
	toVectorMajor(s.w, s.y, b, n)
	orig := norms2(s.w, b, n)
	coef := s.orthBlock(s.w, j)
	for i := 0; i < j; i++ {
		for c := 0; c < b; c++ {
			g := coef[i*b+c]
			s.h[i*ld+p+c] = g
			s.h[(p+c)*ld+i] = g
		}
	}
	for c := 0; c < b; c++ { // Fᵀ·A·F is symmetric up to rounding
		for d := 0; d < c; d++ {
			a := (s.h[(p+c)*ld+p+d] + s.h[(p+d)*ld+p+c]) / 2
			s.h[(p+c)*ld+p+d], s.h[(p+d)*ld+p+c] = a, a
		}
	}
	r, err := s.qr(s.w, orig)
	if err != nil {
		return err
	}
	copy(s.v[j*n:(j+b)*n], s.w)
	for c := 0; c < b; c++ {
		for d := 0; d <= c; d++ {
			s.h[(j+d)*ld+p+c] = r[d*b+c]
			s.h[(p+c)*ld+j+d] = r[d*b+c]
		}
	}
	s.p, s.j = j, j+b
	return nil
}

// dgksEta decides whether a Gram–Schmidt pass must be repeated (Daniel,
// Gragg, Kaufman and Stewart): when a pass kept less than this share of a
// vector's norm, the cancellation was large enough for rounding to leave a
// component along the basis, and another pass removes it. One pass is not
// enough in practice even for mild cancellation: classical Gram–Schmidt
// against a basis that is orthogonal to δ leaves about δ·‖w₀‖/‖w₁‖, so
// the loss compounds from step to step (a laxer 0.1 let it grow tenfold
// per restart on a sparse bipartite graph).
const dgksEta = 1 / math.Sqrt2

// orthBlock orthogonalizes the b vectors of w against the locked vectors
// and V[:j] by block classical Gram–Schmidt, repeated while a pass removes
// more than 1−dgksEta of a vector's norm (at most four passes). It returns
// the accumulated coefficients Vᵀ·w, j×b row-major, in a buffer valid
// until the next call.
//
// Every pass covers the locked vectors (converged eigenvectors) too. It
// is tempting to skip them after the first pass, since for w = A·f with
// f ⊥ x nothing cancels along x; but a later pass against the active
// vectors brings back their own small components along x, and normalizing
// a column that the passes shrank magnifies that by ‖w₀‖/‖w‖ at every
// step. On heavy-tailed bipartite graphs whose fold has a few hundred
// dimensions and 128 wanted pairs, the skip let the basis drift into the
// locked span: active Ritz values grew to 300 for an operator of norm 1
// and the run stalled at 110 of 128 pairs for 1000 restarts. On Gowalla
// the extra passes cost no measurable time (4.9 s before, 4.4–5.0 s
// after, Φ = 128).
func (s *krylov) orthBlock(w []float64, j int) []float64 {
	n, b := s.n, s.b
	acc := s.coef[:j*b]
	clear(acc)
	g := make([]float64, max(j, s.opt.nlocked)*b)
	before := norms2(w, b, n)
	for pass := 0; pass < 4; pass++ {
		if s.opt.nlocked > 0 {
			gram(g, b, s.opt.locked, s.opt.nlocked, w, b, n)
			subMul(w, b, s.opt.locked, s.opt.nlocked, g, b, n)
		}
		gram(g, b, s.v, j, w, b, n)
		subMul(w, b, s.v, j, g, b, n)
		for i := range g[:j*b] {
			acc[i] += g[i]
		}
		after := norms2(w, b, n)
		done := true
		for c := range after {
			if after[c] < dgksEta*before[c] {
				done = false
			}
		}
		if done {
			break
		}
		before = after
	}
	return acc
}

// qr orthonormalizes the block w in place (modified Gram–Schmidt, twice)
// and returns R, b×b row-major upper triangular, with w_before = Q·R. A
// column that is numerically dependent on the basis and the columns before
// it (norm below breakdownTol·orig) gets a zero diagonal in R and is
// replaced by a random unit vector orthogonal to everything: this keeps
// the block full and is how an invariant subspace is left for the rest of
// the spectrum.
func (s *krylov) qr(w []float64, orig []float64) ([]float64, error) {
	n, b := s.n, s.b
	r := make([]float64, b*b)
	for c := 0; c < b; c++ {
		wc := w[c*n : (c+1)*n]
		for pass := 0; pass < 2; pass++ {
			for d := 0; d < c; d++ {
				wd := w[d*n : (d+1)*n]
				x := dot(wd, wc)
				axpy(wc, -x, wd)
				r[d*b+c] += x
			}
		}
		nrm := norm(wc)
		if nrm > breakdownTol*orig[c] && nrm > 0 {
			r[c*b+c] = nrm
			scal(wc, 1/nrm)
			continue
		}
		s.randomVec(wc)
		if err := s.orthonormalizeAgainst(wc, s.v[:s.j*n], s.j, w[:c*n], c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// orthonormalizeOne makes x a unit vector orthogonal to the locked vectors
// and to V[:j+c] (the start block is built in place after V[:j]).
func (s *krylov) orthonormalizeOne(x []float64, c int) error {
	n := s.n
	return s.orthonormalizeAgainst(x, s.v[:(s.j+c)*n], s.j+c, nil, 0)
}

// orthonormalizeAgainst makes x a unit vector orthogonal to the locked
// vectors, to the k1 vectors of a and the k2 vectors of b, drawing a new
// random x if x lies (numerically) in their span.
func (s *krylov) orthonormalizeAgainst(x []float64, a []float64, k1 int, bl []float64, k2 int) error {
	n := s.n
	g := make([]float64, max(k1, k2, s.opt.nlocked, 1))
	for try := 0; try < 5; try++ {
		before := norm(x)
		for pass := 0; pass < 2; pass++ {
			for _, blk := range []struct {
				v []float64
				k int
			}{{s.opt.locked, s.opt.nlocked}, {a, k1}, {bl, k2}} {
				if blk.k == 0 {
					continue
				}
				gram(g, 1, blk.v, blk.k, x, 1, n)
				subMul(x, 1, blk.v, blk.k, g, 1, n)
			}
		}
		nrm := norm(x)
		if nrm > 1e-8*before && nrm > 0 {
			scal(x, 1/nrm)
			return nil
		}
		s.randomVec(x)
	}
	return fmt.Errorf("spectral: lanczos: no direction left orthogonal to %d basis vectors in dimension %d", s.opt.nlocked+k1+k2, n)
}
