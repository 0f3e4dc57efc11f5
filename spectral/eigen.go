package spectral

import (
	"fmt"
	"math"
	"slices"

	"graphfed/graph"
)

// EigenOptions configures LowestEigenpairs. The zero value asks for the
// defaults.
type EigenOptions struct {
	// Tol bounds every residual ‖L·v − λ·v‖ (default 1e-10).
	Tol float64
	// Seed makes the result reproducible.
	Seed uint64
	// Block and MaxBasis are passed to LanczosLargest (0: its defaults).
	Block, MaxBasis int
	// NoFold solves bipartite components on the full normalized adjacency
	// instead of on the fold B·Bᵀ; it exists to check the fold.
	NoFold bool
	// NoProbe skips the multiplicity probe (see LanczosOptions.NoProbe).
	NoProbe bool
	// Progress, when set, is called after every Lanczos restart.
	Progress func(EigenProgress)
	// DenseMax and DenseLimit are passed to LanczosLargest: a component
	// whose operator (the fold's smaller side for a bipartite component)
	// has dimension up to DenseMax is solved densely by gonum's EigenSym,
	// and one up to DenseLimit when Lanczos stalls (0: DefaultDenseMax and
	// DefaultDenseLimit; negative: never).
	DenseMax, DenseLimit int
}

// EigenProgress reports a Lanczos run on one component.
type EigenProgress struct {
	Component int // index of the component, in order of smallest node id
	Nodes     int // its size
	LanczosProgress
}

// Eigenpairs are the Φ lowest eigenpairs of a normalized Laplacian.
type Eigenpairs struct {
	N, Phi int
	// Values are the eigenvalues λ_1 ≤ … ≤ λ_Φ, clipped to [0, 2] (the
	// spectrum's bounds; rounding leaves computed zeros at ±1e-15).
	Values []float64
	// Vectors is N×Φ row-major: Vectors[i*Phi+q] is entry i of the unit
	// eigenvector of Values[q], so row i is node i's spectral embedding
	// and the matrix is LPSFed's P̄. Each vector's sign is fixed by making
	// its largest-magnitude entry (the first, on ties) positive.
	Vectors []float64
	Stats   EigenStats
}

// EigenStats says how the eigenpairs were found.
type EigenStats struct {
	Components int // connected components, isolated nodes included
	Isolated   int // nodes of degree 0
	Lanczos    int // Lanczos runs (other components were solved densely)
	Folded     int // of which through the bipartite fold
	Restarts   int // thick restarts, summed over Lanczos runs
	Iterations int // block Lanczos steps, summed over Lanczos runs
	MatVecs    int // single-vector operator applications
	Probes     int // multiplicity probes
	Dense      int // components solved by EigenSym (by size or as a fallback)
	Fallbacks  int // of which because Lanczos stalled or failed the check
	Widenings  int // Lanczos retries with a wider block and basis
}

// Vector returns a copy of eigenvector q (length N).
func (e *Eigenpairs) Vector(q int) []float64 {
	out := make([]float64, e.N)
	for i := range out {
		out[i] = e.Vectors[i*e.Phi+q]
	}
	return out
}

// add counts the work of one Lanczos run.
func (st *EigenStats) add(res *LanczosResult) {
	if res.Iterations > 0 {
		st.Lanczos++
	}
	if res.folded {
		st.Folded++
	}
	st.Restarts += res.Restarts
	st.Iterations += res.Iterations
	st.MatVecs += res.MatVecs
	st.Probes += res.Probes
	st.Widenings += res.Widenings
	if res.Dense {
		st.Dense++
	}
	if res.Fallback {
		st.Fallbacks++
	}
}

// foldMinSigma: the fold finds the eigenvalues +σ of S from B·Bᵀ; it is
// exact for the wanted set only when the smallest wanted σ is clearly
// positive (else S's eigenvalue 0, whose eigenvectors may live on the
// larger side alone, competes). Below this the component is solved
// unfolded.
const foldMinSigma = 1e-3

// LowestEigenpairs returns the phi lowest eigenpairs of l. The graph is
// split into connected components (the spectrum of a disconnected graph is
// the union of its components' spectra, which is how eigenvalue 0 gets its
// exact multiplicity); small components are solved densely, large ones by
// LanczosLargest on S = I − L (the lowest eigenvalues of L are the largest
// of S), bipartite ones on the fold B·Bᵀ (see foldOp). A component needs
// no more eigenpairs than can rank among the phi lowest: with Z components
// that have an edge, each holding the eigenvalue 0, that is phi − Z + 1,
// and when that is 1 the null vector D^1/2·1 is known in closed form. The
// phi lowest of all components' eigenvalues are returned, ties in order of
// component (smallest node id first).
func LowestEigenpairs(l *Laplacian, phi int, opt EigenOptions) (*Eigenpairs, error) {
	n := l.N()
	if phi < 1 || phi > n {
		return nil, fmt.Errorf("spectral: eigenpairs: phi %d for %d nodes, want 1..%d", phi, n, n)
	}
	if opt.Tol < 0 || math.IsNaN(opt.Tol) {
		return nil, fmt.Errorf("spectral: eigenpairs: tolerance %v, want ≥ 0", opt.Tol)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-10
	}
	comps := components(l.adj)
	e := &Eigenpairs{N: n, Phi: phi, Stats: EigenStats{Components: len(comps)}}
	local := make([]int32, n)
	type pair struct {
		val     float64
		comp, q int // eigenpair q of component comp
	}
	var cands []pair
	sols := make([]*LanczosResult, len(comps)) // local eigenpairs per component
	// Every component with an edge has the eigenvalue 0, so with Z such
	// components a component can place at most phi − Z + 1 eigenvalues
	// among the lowest phi: its zero and phi − Z others.
	withEdges := 0
	for ci := range comps {
		if comps[ci].entries > 0 {
			withEdges++
		}
	}
	for ci := range comps {
		c := &comps[ci]
		want := min(len(c.nodes), max(1, phi-withEdges+1))
		var res *LanczosResult
		var err error
		switch {
		case c.entries == 0:
			e.Stats.Isolated++
			res = &LanczosResult{N: 1, Nev: 1, Values: []float64{1}, Vectors: []float64{1}, Residuals: []float64{0}}
		case want == 1:
			res = l.nullVector(c)
		default:
			res, err = l.solveComponent(ci, c, want, local, opt, &e.Stats)
			if err == nil {
				err = exactZero(res, ci, c)
			}
		}
		if err != nil {
			return nil, err
		}
		sols[ci] = res
		for q, v := range res.Values {
			cands = append(cands, pair{val: v, comp: ci, q: q})
		}
	}
	// Stable: ties keep component order, then the order within one.
	slices.SortStableFunc(cands, func(a, b pair) int {
		switch {
		case a.val < b.val:
			return -1
		case a.val > b.val:
			return 1
		}
		return 0
	})
	e.Values = make([]float64, phi)
	e.Vectors = make([]float64, n*phi)
	// Scatter row by row, so that both the local and the global N×Φ
	// matrices are read and written along their rows.
	cols := make([][]int, len(comps)) // per component: global, local column pairs
	for q := 0; q < phi; q++ {
		p := cands[q]
		e.Values[q] = p.val
		cols[p.comp] = append(cols[p.comp], q, p.q)
	}
	for ci, pairs := range cols {
		if len(pairs) == 0 {
			continue
		}
		nev := sols[ci].Nev
		for k, g := range comps[ci].nodes {
			dst := e.Vectors[int(g)*phi : (int(g)+1)*phi]
			src := sols[ci].Vectors[k*nev : (k+1)*nev]
			for t := 0; t < len(pairs); t += 2 {
				dst[pairs[t]] = src[pairs[t+1]]
			}
		}
	}
	fixSigns(e.Vectors, n, phi)
	for q, v := range e.Values {
		e.Values[q] = min(max(v, 0), 2) // rounding can leave ±1e-15 outside
	}
	return e, nil
}

// nullVector is the eigenpair (0, D^1/2·1/‖D^1/2·1‖) that every component
// with an edge has: L·D^1/2·1 = D^1/2·1 − D^-1/2·A·1 = 0.
func (l *Laplacian) nullVector(c *component) *LanczosResult {
	v := make([]float64, len(c.nodes))
	var sum float64
	for k, g := range c.nodes {
		v[k] = math.Sqrt(l.deg[g])
		sum += l.deg[g]
	}
	scal(v, 1/math.Sqrt(sum))
	return &LanczosResult{N: len(v), Nev: 1, Values: []float64{0}, Vectors: v, Residuals: []float64{0}}
}

// exactZero sets the lowest eigenvalue of a connected component with an
// edge to exactly 0, which it is (simple, with eigenvector D^1/2·1); the
// solver leaves rounding there (1 − σ for σ = 0.99999999999999956 on the
// fold). A lowest value far from 0 means a wrong answer, which is an
// error rather than something to round away.
func exactZero(res *LanczosResult, ci int, c *component) error {
	if v := res.Values[0]; math.Abs(v) > 1e-6 {
		return fmt.Errorf("spectral: eigenpairs: component %d (%d nodes): lowest eigenvalue %g, want 0 (solver failure)", ci, len(c.nodes), v)
	}
	res.Values[0] = 0
	return nil
}

// checkFactor: a Lanczos answer is accepted when every residual
// ‖L·v − λ·v‖, recomputed on the component, is within checkFactor·Tol (the
// solver's own estimates come from the Krylov relation, which rounding
// and locking can leave optimistic).
const checkFactor = 10

// solveComponent returns the want lowest eigenpairs of L restricted to
// component c: Values ascending, Vectors over the component's local ids.
// A Lanczos answer is checked against the component's operator; one that
// fails is replaced by a dense solve when the operator's dimension is
// within DenseLimit, and is an error otherwise.
func (l *Laplacian) solveComponent(ci int, c *component, want int, local []int32, opt EigenOptions, st *EigenStats) (*LanczosResult, error) {
	size := len(c.nodes)
	sub := c.subgraph(l.adj, local)
	inv := make([]float64, size)
	for k, g := range c.nodes {
		inv[k] = l.invSqrt[g]
	}
	lopt := LanczosOptions{Block: opt.Block, MaxBasis: opt.MaxBasis, Tol: opt.Tol, Seed: opt.Seed + uint64(ci), NoProbe: opt.NoProbe,
		DenseMax: opt.DenseMax, DenseLimit: opt.DenseLimit}
	if opt.Progress != nil {
		lopt.Progress = func(p LanczosProgress) {
			opt.Progress(EigenProgress{Component: ci, Nodes: size, LanczosProgress: p})
		}
	}
	where := func(dim int) string {
		if dim == size {
			return fmt.Sprintf("component %d (%d nodes)", ci, size)
		}
		return fmt.Sprintf("component %d (%d nodes, bipartite, fold of dimension %d)", ci, size, dim)
	}
	solve := func(lopt LanczosOptions) (*LanczosResult, int, error) {
		if c.bipartite && !opt.NoFold {
			res, dim, ok, err := l.solveFolded(c, sub, inv, want, lopt)
			if err != nil {
				return nil, dim, fmt.Errorf("spectral: eigenpairs: %s: %w", where(dim), err)
			}
			if ok {
				return res, dim, nil
			}
		}
		res, err := LanczosLargest(&normAdjOp{adj: sub, invSqrt: inv}, want, lopt)
		if err != nil {
			return nil, size, fmt.Errorf("spectral: eigenpairs: %s: %w", where(size), err)
		}
		for q, v := range res.Values {
			res.Values[q] = 1 - v
		}
		return res, size, nil
	}
	res, dim, err := solve(lopt)
	if err != nil {
		return nil, err
	}
	st.add(res)
	if res.Dense {
		return res, nil
	}
	worst := maxComponentResidual(sub, inv, res)
	if worst <= checkFactor*opt.Tol {
		return res, nil
	}
	limit := opt.DenseLimit
	if limit == 0 {
		limit = DefaultDenseLimit
	}
	if dim > limit {
		return nil, fmt.Errorf("spectral: eigenpairs: %s: Lanczos pairs have residual %.2g on the component, above %g·%g, and dimension %d is above the dense fallback's limit %d: %w",
			where(dim), worst, float64(checkFactor), opt.Tol, dim, limit, ErrNoConvergence)
	}
	lopt.DenseMax = dim // the same operator, solved densely
	res, _, err = solve(lopt)
	if err != nil {
		return nil, err
	}
	res.Fallback = true
	st.Dense++
	st.Fallbacks++
	st.MatVecs += res.MatVecs
	return res, nil
}

// maxComponentResidual is the largest ‖L·v_q − λ_q·v_q‖ over the pairs of
// res (L's eigenvalues, vectors on the component's local ids), with
// L·v = v − S·v.
func maxComponentResidual(sub *graph.CSR, inv []float64, res *LanczosResult) float64 {
	n, k := res.N, res.Nev
	sv := make([]float64, n*k)
	(&normAdjOp{adj: sub, invSqrt: inv}).MulBlock(sv, res.Vectors, k)
	sum := make([]float64, k)
	for i := 0; i < n; i++ {
		row, v := sv[i*k:(i+1)*k], res.Vectors[i*k:(i+1)*k]
		for q, x := range v {
			d := x - row[q] - res.Values[q]*x
			sum[q] += d * d
		}
	}
	worst := 0.0
	for _, s2 := range sum {
		if !(s2 <= worst*worst) { // NaN counts as the worst
			worst = math.Sqrt(s2)
			if math.IsNaN(worst) {
				return worst
			}
		}
	}
	return worst
}

// solveFolded solves a bipartite component through M = B·Bᵀ on its smaller
// side, of dimension dim. ok is false when the fold does not apply (too
// many wanted pairs for the smaller side, or a wanted σ too close to 0);
// the caller then solves unfolded.
func (l *Laplacian) solveFolded(c *component, sub *graph.CSR, inv []float64, want int, lopt LanczosOptions) (res *LanczosResult, dim int, ok bool, err error) {
	r, rows, cols := c.biadjacency(sub)
	a := len(rows)
	denseMax := lopt.DenseMax
	if denseMax == 0 {
		denseMax = DefaultDenseMax
	}
	// Lanczos needs room for a basis beyond the wanted set; a dense solve
	// of the fold can return all of its pairs.
	if want > a/2 && (a > denseMax || want > a) {
		return nil, a, false, nil
	}
	op := &foldOp{r: r, rt: transpose(r), invSqrtA: make([]float64, a),
		invSqrtB: make([]float64, len(cols)), invB: make([]float64, len(cols))}
	for k, v := range rows {
		op.invSqrtA[k] = inv[v]
	}
	for k, v := range cols {
		op.invSqrtB[k] = inv[v]
		op.invB[k] = inv[v] * inv[v]
	}
	// ‖S·v − σ·v‖ = ‖M·u − σ²·u‖/(σ·√2) for v = [u; Bᵀu/σ]/√2, so the
	// residual bound on M scales with σ = √θ.
	tol := lopt.Tol
	lopt.tolFor = func(theta float64) float64 {
		return tol * math.Sqrt2 * max(math.Sqrt(max(theta, 0)), foldMinSigma)
	}
	fres, err := LanczosLargest(op, want, lopt)
	if err != nil {
		return nil, a, false, err
	}
	if math.Sqrt(max(fres.Values[want-1], 0)) < foldMinSigma {
		return nil, a, false, nil
	}
	res = fres
	half := make([]float64, len(cols)*want)
	op.halfApply(half, res.Vectors, want)
	size := len(c.nodes)
	out := &LanczosResult{N: size, Nev: want, Values: make([]float64, want), Vectors: make([]float64, size*want),
		Residuals: make([]float64, want), Restarts: res.Restarts, Iterations: res.Iterations, MatVecs: res.MatVecs, Probes: res.Probes,
		Widenings: res.Widenings, Dense: res.Dense, Fallback: res.Fallback, folded: true}
	// ‖Bᵀu‖ = σ in exact arithmetic; scaling the item half by its computed
	// norm keeps every vector unit whatever the rounding.
	wn := make([]float64, want)
	for k := range cols {
		for q, x := range half[k*want : (k+1)*want] {
			wn[q] += x * x
		}
	}
	for q := 0; q < want; q++ {
		sigma := math.Sqrt(max(res.Values[q], 0))
		out.Values[q] = 1 - sigma
		out.Residuals[q] = res.Residuals[q] / (sigma * math.Sqrt2)
		wn[q] = 1 / math.Sqrt(2*wn[q])
	}
	for k, v := range rows {
		dst, src := out.Vectors[int(v)*want:(int(v)+1)*want], res.Vectors[k*want:(k+1)*want]
		for q, x := range src {
			dst[q] = x / math.Sqrt2
		}
	}
	for k, v := range cols {
		dst, src := out.Vectors[int(v)*want:(int(v)+1)*want], half[k*want:(k+1)*want]
		for q, x := range src {
			dst[q] = x * wn[q]
		}
	}
	return out, a, true, nil
}

// fixSigns flips each column of the n×k row-major matrix v so that its
// largest-magnitude entry (the first of equal ones) is positive. It walks
// the matrix by rows, as it is stored.
func fixSigns(v []float64, n, k int) {
	best := make([]float64, k)
	sign := make([]float64, k)
	for q := range best {
		best[q] = -1
	}
	for i := 0; i < n; i++ {
		for q, x := range v[i*k : (i+1)*k] {
			if a := math.Abs(x); a > best[q] {
				best[q] = a
				sign[q] = 1
				if x < 0 {
					sign[q] = -1
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		row := v[i*k : (i+1)*k]
		for q := range row {
			row[q] *= sign[q]
		}
	}
}
