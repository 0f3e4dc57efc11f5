package spectral

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// LanczosOptions configures LanczosLargest. The zero value asks for the
// defaults.
type LanczosOptions struct {
	// Block is the number of vectors b per Lanczos block (default 4). A
	// block method finds an eigenvalue of multiplicity up to b directly;
	// higher multiplicities are found by the probe.
	Block int
	// MaxBasis is the number of basis vectors m after which the basis is
	// thick-restarted (default max(2·nev, nev+8·b), capped by n).
	MaxBasis int
	// Tol accepts a Ritz pair (θ, x) when ‖A·x − θ·x‖ ≤ Tol, the residual
	// being read from the Krylov relation (default 1e-10).
	Tol float64
	// MaxRestarts bounds the number of thick restarts (default 1000).
	MaxRestarts int
	// Seed seeds the random start block and every random vector drawn
	// later; a run is deterministic given the seed.
	Seed uint64
	// NoProbe skips the final search for eigenvalues missed because their
	// multiplicity exceeds the block size (see probe).
	NoProbe bool
	// Progress, when set, is called after every thick restart.
	Progress func(LanczosProgress)

	// tolFor, when set, replaces Tol by a bound that depends on θ (the
	// bipartite fold needs ‖r‖ ≤ tol·√(2θ)).
	tolFor func(theta float64) float64
	// locked are vectors (vector-major, nlocked×n, orthonormal) the search
	// is kept orthogonal to: the probe's deflation.
	locked  []float64
	nlocked int
	// start are vectors (vector-major, nstart×n) put first into the start
	// block.
	start  []float64
	nstart int
}

// LanczosProgress is reported after each thick restart.
type LanczosProgress struct {
	Restarts  int // restarts so far
	Converged int // wanted Ritz pairs within tolerance
	Wanted    int // nev
	MatVecs   int // operator applications to single vectors so far
}

// LanczosResult holds the nev largest eigenpairs of a symmetric operator.
type LanczosResult struct {
	N, Nev int
	// Values are the eigenvalues, largest first.
	Values []float64
	// Vectors is N×Nev row-major: Vectors[i*Nev+q] is entry i of the unit
	// eigenvector of Values[q].
	Vectors []float64
	// Residuals estimate ‖A·x − θ·x‖ for each pair.
	Residuals []float64
	// Restarts, Iterations, MatVecs and Probes count thick restarts, block
	// Lanczos steps, single-vector operator applications and multiplicity
	// probes.
	Restarts, Iterations, MatVecs, Probes int
}

// ErrNoConvergence is wrapped by the error LanczosLargest (and
// LowestEigenpairs) returns when MaxRestarts restarts did not bring every
// wanted pair within tolerance.
var ErrNoConvergence = errors.New("no convergence")

// LanczosLargest computes the nev largest (algebraic) eigenpairs of the
// symmetric operator op by block thick-restart Lanczos (Krylov–Schur) with
// full reorthogonalization: every new block is orthogonalized against the
// whole basis by classical Gram–Schmidt done twice, as blocked
// matrix–matrix products (blockops.go). Operators of dimension up to
// denseMax are solved densely instead. The result is deterministic for a
// given Seed.
func LanczosLargest(op Operator, nev int, opt LanczosOptions) (*LanczosResult, error) {
	n := op.Dim()
	if nev < 1 || nev > n {
		return nil, fmt.Errorf("spectral: lanczos: %d eigenpairs wanted of a dimension-%d operator, want 1..%d", nev, n, n)
	}
	if opt.Block < 0 || opt.MaxBasis < 0 || opt.Tol < 0 || opt.MaxRestarts < 0 || math.IsNaN(opt.Tol) {
		return nil, fmt.Errorf("spectral: lanczos: block %d, max basis %d, tol %v, max restarts %d: want non-negative numbers",
			opt.Block, opt.MaxBasis, opt.Tol, opt.MaxRestarts)
	}
	b := opt.Block
	if b == 0 {
		b = 4
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-10
	}
	if opt.MaxRestarts == 0 {
		opt.MaxRestarts = 1000
	}
	room := n - opt.nlocked // dimension left for the search
	m := opt.MaxBasis
	if m == 0 {
		m = max(2*nev, nev+8*b)
	}
	if n <= denseMax || nev+2*b > room-b {
		if opt.nlocked > 0 || n > denseLimit {
			return nil, fmt.Errorf("spectral: lanczos: %d eigenpairs of dimension %d leave no room for a block of %d", nev, n, b)
		}
		return denseLargest(op, nev)
	}
	m = max(min(m, room-b), nev+b)
	s := newKrylov(op, nev, b, m, opt)
	res, err := s.run()
	if err != nil {
		return nil, err
	}
	if !opt.NoProbe {
		if err := s.probe(res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// krylov is the state of one block Krylov–Schur run. The basis V holds j
// orthonormal vectors (vector-major); the first p have been multiplied by
// the operator and the last b = j − p form the residual block F. The
// relation A·V[:p] = V[:j]·H[:j,:p] holds, H being symmetric on [:p,:p],
// except that the couplings of the nlock leading (locked, converged)
// vectors are dropped; see restart.
type krylov struct {
	op           Operator
	n, nev, b, m int
	opt          LanczosOptions
	rng          *rand.Rand

	v  []float64 // (m+b)×n basis, vector-major
	h  []float64 // ld×ld projected matrix, row-major
	ld int
	p  int // multiplied vectors
	j  int // basis vectors; j = p + b

	nlock   int       // leading basis vectors that are locked Ritz vectors
	lockVal []float64 // their Ritz values
	lockRes []float64 // and residual estimates

	w      []float64 // b×n new block
	x, y   []float64 // n×b node-major operator input and output
	coef   []float64 // (ld+nlocked)×b Gram–Schmidt coefficients
	matvec int       // single-vector operator applications
	iters  int       // block steps
}

func newKrylov(op Operator, nev, b, m int, opt LanczosOptions) *krylov {
	n := op.Dim()
	ld := m + b
	return &krylov{
		op: op, n: n, nev: nev, b: b, m: m, opt: opt,
		rng:  rand.New(rand.NewPCG(opt.Seed, 0x1a2c305)),
		v:    make([]float64, ld*n),
		h:    make([]float64, ld*ld),
		ld:   ld,
		w:    make([]float64, b*n),
		x:    make([]float64, n*b),
		y:    make([]float64, n*b),
		coef: make([]float64, max(ld, opt.nlocked)*b),
	}
}

// tol is the residual bound for a Ritz value.
func (s *krylov) tol(theta float64) float64 {
	if s.opt.tolFor != nil {
		return s.opt.tolFor(theta)
	}
	return s.opt.Tol
}

// run iterates expansion and thick restart until the nev largest Ritz
// pairs are within tolerance.
func (s *krylov) run() (*LanczosResult, error) {
	if err := s.startBlock(); err != nil {
		return nil, err
	}
	for restarts := 0; ; restarts++ {
		for s.p+s.b <= s.m {
			if err := s.expand(); err != nil {
				return nil, err
			}
		}
		res, conv, err := s.restart(restarts)
		if err != nil {
			return nil, err
		}
		if s.opt.Progress != nil {
			s.opt.Progress(LanczosProgress{Restarts: restarts, Converged: conv, Wanted: s.nev, MatVecs: s.matvec})
		}
		if res != nil {
			res.Restarts, res.Iterations = restarts, s.iters
			return res, nil
		}
		if restarts >= s.opt.MaxRestarts {
			return nil, fmt.Errorf("spectral: lanczos: %d of %d eigenpairs within tolerance after %d restarts: %w",
				conv, s.nev, restarts, ErrNoConvergence)
		}
	}
}

// startBlock fills the first block with the given start vectors and random
// ones, orthonormalized against the locked vectors and each other.
func (s *krylov) startBlock() error {
	n, b := s.n, s.b
	for c := 0; c < b; c++ {
		wc := s.v[c*n : (c+1)*n]
		if c < s.opt.nstart {
			copy(wc, s.opt.start[c*n:(c+1)*n])
		} else {
			s.randomVec(wc)
		}
	}
	s.p, s.j = 0, 0
	for c := 0; c < b; c++ {
		wc := s.v[c*n : (c+1)*n]
		if err := s.orthonormalizeOne(wc, c); err != nil {
			return err
		}
	}
	s.j = b
	return nil
}

func (s *krylov) randomVec(x []float64) {
	for t := range x {
		x[t] = s.rng.NormFloat64()
	}
}
