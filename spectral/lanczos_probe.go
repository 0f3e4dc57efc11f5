package spectral

// probeTol is the residual to which a probe converges before its Ritz value
// is compared with the smallest wanted one: the comparison keeps a margin
// of the residual, so a loose bound suffices to decide.
const probeTol = 1e-6

// probe looks for eigenvalues that a block Krylov space cannot see: in
// exact arithmetic the Krylov space of a b-vector start block holds at most
// b vectors of any eigenspace, so an eigenvalue of multiplicity above b
// can be missed entirely. The probe runs a short Lanczos from a fresh
// random block deflated by the eigenvectors found (kept orthogonal to
// them). The largest eigenvalue of the deflated operator is either a
// missed copy, which then enters the result in place of the smallest
// wanted pair, or the next eigenvalue below the wanted set, which ends the
// search. Each round either ends or grows the set of found copies, so at
// most nev rounds run. It only runs when the values found could hide a
// missed copy at all (hasCluster).
func (s *krylov) probe(res *LanczosResult) error {
	n, nev := s.n, res.Nev
	if nev+2*s.b+max(8*s.b, 32) > n {
		return nil // no room for a deflated search; the dense path covers small n
	}
	if !hasCluster(res.Values, s.b) {
		return nil
	}
	for round := 1; round <= nev; round++ {
		locked := make([]float64, nev*n)
		toVectorMajor(locked, res.Vectors, nev, n)
		smallest := res.Values[nev-1]
		opt := s.opt
		opt.locked, opt.nlocked = locked, nev
		opt.Seed = s.opt.Seed + uint64(round)*0x9e3779b97f4a7c15
		opt.tolFor = func(theta float64) float64 { return max(s.tol(theta), probeTol) }
		opt.start, opt.nstart = nil, 0
		pr, err := s.probeRun(opt)
		res.Probes++
		if err != nil {
			return err
		}
		res.MatVecs += pr.MatVecs
		res.Iterations += pr.Iterations
		theta, rho := pr.Values[0], pr.Residuals[0]
		if theta+rho < smallest+s.tol(smallest) {
			return nil
		}
		// A candidate: converge it to the full tolerance from where it is.
		opt.tolFor = s.opt.tolFor
		opt.start, opt.nstart = make([]float64, n), 1
		toVectorMajor(opt.start, pr.Vectors, 1, n)
		pr, err = s.probeRun(opt)
		if err != nil {
			return err
		}
		res.MatVecs += pr.MatVecs
		res.Iterations += pr.Iterations
		theta = pr.Values[0]
		if theta <= smallest+s.tol(smallest) {
			return nil // a tie with the smallest wanted value: either copy will do
		}
		res.insert(theta, pr.Vectors, pr.Residuals[0])
	}
	return nil
}

// clusterWidth is the spread below which Ritz values count as copies of
// one eigenvalue. Copies of a multiple eigenvalue agree to rounding
// (1e-14 or so); the margin also covers clusters so tight that no Krylov
// polynomial of practical degree tells them apart.
const clusterWidth = 1e-6

// hasCluster reports whether b or more of the values (descending) lie
// within clusterWidth of each other. In exact arithmetic the block Krylov
// space holds min(b, multiplicity) vectors of every eigenspace, so an
// eigenvalue with missed copies appears exactly b times among the values
// found: without such a run nothing can have been missed, and the probe,
// which costs about a fifth of the main run, is skipped.
func hasCluster(values []float64, b int) bool {
	for q := 0; q+b-1 < len(values); q++ {
		if values[q]-values[q+b-1] <= clusterWidth {
			return true
		}
	}
	return false
}

// probeRun is one deflated Lanczos run for the single largest eigenpair.
func (s *krylov) probeRun(opt LanczosOptions) (*LanczosResult, error) {
	m := max(8*s.b, 32)
	k := newKrylov(s.op, 1, s.b, m, opt)
	return k.run()
}

// insert puts the pair (theta, x) with x an n×1 vector into the result in
// place of the smallest pair and restores the descending order.
func (r *LanczosResult) insert(theta float64, x []float64, resid float64) {
	n, nev := r.N, r.Nev
	q := nev - 1
	r.Values[q], r.Residuals[q] = theta, resid
	for i := 0; i < n; i++ {
		r.Vectors[i*nev+q] = x[i]
	}
	for q > 0 && r.Values[q-1] < r.Values[q] {
		r.Values[q-1], r.Values[q] = r.Values[q], r.Values[q-1]
		r.Residuals[q-1], r.Residuals[q] = r.Residuals[q], r.Residuals[q-1]
		for i := 0; i < n; i++ {
			row := r.Vectors[i*nev : (i+1)*nev]
			row[q-1], row[q] = row[q], row[q-1]
		}
		q--
	}
}
