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
	// DenseMax: operators of dimension up to DenseMax are solved densely
	// by gonum's EigenSym (default DefaultDenseMax; negative: never by
	// size, only as the fallback below).
	DenseMax int
	// DenseLimit: when Lanczos stalls even after widening its block and
	// basis, an operator of dimension up to DenseLimit is solved densely
	// instead (default DefaultDenseLimit; negative: never, return the
	// *ConvergenceError).
	DenseLimit int
	// Stall is the number of restarts without a newly converged pair after
	// which a run counts as stalled and is retried wider (default 60).
	Stall int

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
	// Widenings counts retries with a wider block and basis after a
	// stall; Dense says the pairs come from EigenSym, Fallback that this
	// happened because Lanczos stalled.
	Widenings       int
	Dense, Fallback bool

	folded bool // computed through the bipartite fold (LowestEigenpairs)
}

// ErrNoConvergence is wrapped by the error LanczosLargest (and
// LowestEigenpairs) returns when MaxRestarts restarts did not bring every
// wanted pair within tolerance.
var ErrNoConvergence = errors.New("no convergence")

// ConvergenceError says why LanczosLargest gave up: how many wanted pairs
// converged, the residual estimates of the others, the last basis and
// block, and the reason. It wraps ErrNoConvergence.
type ConvergenceError struct {
	Converged, Wanted int
	Restarts          int     // of the last attempt
	Attempts          int     // runs, the first and the widened ones
	Basis, Block      int     // of the last attempt
	Tol               float64 // the residual bound asked for
	// Residuals are the estimates ‖A·x − θ·x‖ of the wanted pairs not
	// within tolerance at the last restart, largest first.
	Residuals []float64
	Reason    string
}

func (e *ConvergenceError) Error() string {
	res := "none"
	if len(e.Residuals) > 0 {
		res = fmt.Sprintf("%.2g..%.2g", e.Residuals[len(e.Residuals)-1], e.Residuals[0])
	}
	return fmt.Sprintf("spectral: lanczos: %d of %d eigenpairs within tolerance %g after %d restarts "+
		"(attempt %d, basis %d, block %d; residuals of the other %d: %s): %s: %v",
		e.Converged, e.Wanted, e.Tol, e.Restarts, e.Attempts, e.Basis, e.Block, e.Wanted-e.Converged, res, e.Reason, ErrNoConvergence)
}

func (e *ConvergenceError) Unwrap() error { return ErrNoConvergence }

// Defaults of LanczosOptions.DenseMax and DenseLimit. BenchmarkDenseVsLanczos
// (Φ = 128, heavy-tailed folds, 2-core machine) measured EigenSym at 0.09,
// 0.37, 3.2, 15 and 32 s for dimensions 250, 500, 1000, 1500 and 2000,
// against 0.5, 0.36, 0.61, 0.61 and 0.74 s for Lanczos: they cross near
// 500, so dense is the default up to 600, where it costs at most about
// twice as much and is exact. As a fallback after a stall, dense is still
// worth its cost up to 3000 (about two minutes); beyond that the
// *ConvergenceError is returned.
const (
	DefaultDenseMax   = 600
	DefaultDenseLimit = 3000
)

// maxWidenings bounds the retries after a stall, each doubling the block
// (up to maxBlock) and the basis.
const (
	maxWidenings = 2
	maxBlock     = 16
)

// LanczosLargest computes the nev largest (algebraic) eigenpairs of the
// symmetric operator op by block thick-restart Lanczos (Krylov–Schur) with
// full reorthogonalization: every new block is orthogonalized against the
// whole basis by classical Gram–Schmidt done twice, as blocked
// matrix–matrix products (blockops.go). Operators of dimension up to
// DenseMax are solved densely instead. A run that stalls (Stall restarts
// without a newly converged pair) or exhausts MaxRestarts is retried with
// the block and basis doubled, at most maxWidenings times; then the
// operator is solved densely if its dimension is within DenseLimit, and
// otherwise a *ConvergenceError says how far it got and why. The result
// is deterministic for a given Seed.
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
	if opt.Stall == 0 {
		opt.Stall = 60
	}
	denseMax, denseLimit := opt.DenseMax, opt.DenseLimit
	if denseMax == 0 {
		denseMax = DefaultDenseMax
	}
	if denseLimit == 0 {
		denseLimit = DefaultDenseLimit
	}
	room := n - opt.nlocked // dimension left for the search
	m := opt.MaxBasis
	if m == 0 {
		m = max(2*nev, nev+8*b)
	}
	if n <= denseMax || nev+2*b > room-b {
		if opt.nlocked > 0 || n > max(denseMax, denseLimit, denseFloor) {
			return nil, fmt.Errorf("spectral: lanczos: %d eigenpairs of dimension %d leave no room for a block of %d", nev, n, b)
		}
		return denseLargest(op, nev)
	}
	var work LanczosResult // counts of the failed attempts
	for attempt := 1; ; attempt++ {
		m = max(min(m, room-b), nev+b)
		s := newKrylov(op, nev, b, m, opt)
		res, err := s.run()
		work.MatVecs += s.matvec
		work.Iterations += s.iters
		var ce *ConvergenceError
		if err != nil && !errors.As(err, &ce) {
			return nil, err
		}
		if err == nil {
			res.Widenings = attempt - 1
			res.MatVecs += work.MatVecs - s.matvec
			res.Iterations += work.Iterations - s.iters
			if !opt.NoProbe {
				if err := s.probe(res); err != nil {
					return nil, err
				}
			}
			return res, nil
		}
		ce.Attempts = attempt
		wider := attempt <= maxWidenings && (b < maxBlock || m < room-b) && nev+2*min(2*b, maxBlock) <= room-b
		if wider {
			// A stall means the basis cannot separate what is left of the
			// wanted set from its neighbours (clusters wider than the
			// block, or a thin basis); more room and a wider block are
			// the remedies that keep the work so far meaningful.
			b = min(2*b, maxBlock)
			m = 2 * m
			continue
		}
		if opt.nlocked == 0 && n <= denseLimit {
			res, err := denseLargest(op, nev)
			if err != nil {
				return nil, fmt.Errorf("%w; %w", ce, err)
			}
			res.Fallback, res.Widenings = true, attempt-1
			res.MatVecs += work.MatVecs
			res.Iterations += work.Iterations
			return res, nil
		}
		if opt.nlocked == 0 {
			ce.Reason += fmt.Sprintf("; dimension %d is above the dense fallback's limit %d", n, denseLimit)
		}
		return nil, ce
	}
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

	pending []float64 // residual estimates of the unconverged wanted pairs, largest first
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
	best, since := -1, 0
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
		if conv > best {
			best, since = conv, restarts
		}
		reason := ""
		switch {
		case restarts >= s.opt.MaxRestarts:
			reason = "restart limit reached"
		case restarts-since >= s.opt.Stall:
			reason = fmt.Sprintf("stalled: no pair converged in the last %d restarts", restarts-since)
		}
		if reason != "" {
			return nil, &ConvergenceError{Converged: conv, Wanted: s.nev, Restarts: restarts, Basis: s.m, Block: s.b,
				Tol: s.opt.Tol, Residuals: s.pending, Reason: reason}
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
