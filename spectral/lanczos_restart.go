package spectral

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// restart computes the Ritz pairs of the active part of the projected
// matrix and thick-restarts (Stewart's Krylov–Schur form). The basis is
// laid out as [locked | active | residual block F]:
//
//   - locked vectors are converged wanted Ritz vectors. Their coupling to F
//     (their residual, below tolerance) is dropped, so they leave the
//     projected problem: later restarts neither re-solve nor rotate them,
//     which is most of a restart's cost once many pairs have converged.
//     New vectors are still orthogonalized against them.
//   - the active part shrinks to its k largest Ritz vectors; H on it
//     becomes diagonal with an arrow of couplings to F.
//
// It returns the result once the nev largest Ritz values are all locked;
// conv counts the wanted pairs within tolerance.
func (s *krylov) restart(iter int) (res *LanczosResult, conv int, err error) {
	me, b, ld, n, nl := s.p, s.b, s.ld, s.n, s.nlock
	na := me - nl
	t := mat.NewSymDense(na, nil)
	for i := 0; i < na; i++ {
		for j := i; j < na; j++ {
			t.SetSym(i, j, (s.h[(nl+i)*ld+nl+j]+s.h[(nl+j)*ld+nl+i])/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(t, true) {
		return nil, 0, fmt.Errorf("spectral: lanczos: restart %d: projected %d×%d eigenproblem did not converge", iter, na, na)
	}
	asc := es.Values(nil)
	var ev mat.Dense
	es.VectorsTo(&ev)
	// Active Ritz values largest first; y is na×na row-major, column q
	// holding the coordinates of the q-th largest Ritz vector.
	theta := make([]float64, na)
	y := make([]float64, na*na)
	for q := 0; q < na; q++ {
		theta[q] = asc[na-1-q]
		for i := 0; i < na; i++ {
			y[i*na+q] = ev.At(i, na-1-q)
		}
	}
	// The residual of active Ritz pair q is F·(C·y_q) with C = H[p:p+b,
	// nl:p] the coupling of F, whose columns are orthonormal.
	couple := make([]float64, na*b) // row q: C·y_q
	resid := make([]float64, na)
	for q := 0; q < na; q++ {
		cq := couple[q*b : (q+1)*b]
		for d := 0; d < b; d++ {
			row := s.h[(me+d)*ld+nl : (me+d)*ld+me]
			var sum float64
			for i, c := range row {
				sum += c * y[i*na+q]
			}
			cq[d] = sum
		}
		resid[q] = norm(cq)
	}

	// The wanted active pairs are those among the nev largest of locked
	// and active values together; lock the converged ones.
	wanted := s.wantedActive(theta)
	var lock, keep []int
	s.pending = s.pending[:0]
	for q := 0; q < wanted; q++ {
		if resid[q] <= s.tol(theta[q]) {
			lock = append(lock, q)
		} else {
			s.pending = append(s.pending, resid[q])
		}
	}
	slices.Sort(s.pending)
	slices.Reverse(s.pending)
	conv = min(nl, s.nev) + len(lock)
	done := len(lock) == wanted
	if !done {
		k := max(s.nev+(s.m-s.nev)/2, nl+len(lock)+b)
		k = min(k, s.m-b, nl+na)
		for q := 0; q < na && nl+len(lock)+len(keep) < k; q++ {
			if !slices.Contains(lock, q) {
				keep = append(keep, q)
			}
		}
	}
	if !done && nl+len(lock)+b > s.m-b {
		// Only pairs pushed out of the wanted set by larger eigenvalues
		// found after them make the locked set outgrow nev.
		return nil, conv, fmt.Errorf("spectral: lanczos: restart %d: %d locked vectors leave no room in a basis of %d; raise MaxBasis",
			iter, nl+len(lock), s.m)
	}
	sel := append(slices.Clone(lock), keep...)
	ysel := make([]float64, na*len(sel))
	for c, q := range sel {
		for i := 0; i < na; i++ {
			ysel[i*len(sel)+c] = y[i*na+q]
		}
	}
	mulInPlace(s.v[nl*n:], na, ysel, len(sel), len(sel), n)
	for _, q := range lock {
		s.lockVal = append(s.lockVal, theta[q])
		s.lockRes = append(s.lockRes, resid[q])
	}
	s.nlock += len(lock)
	if done {
		return s.finish(), conv, nil
	}

	k := s.nlock + len(keep)
	copy(s.v[k*n:(k+b)*n], s.v[me*n:(me+b)*n])
	clear(s.h)
	for i, v := range s.lockVal {
		s.h[i*ld+i] = v
	}
	for c, q := range keep {
		i := s.nlock + c
		s.h[i*ld+i] = theta[q]
		for d, cv := range couple[q*b : (q+1)*b] {
			s.h[(k+d)*ld+i] = cv
			s.h[i*ld+k+d] = cv
		}
	}
	s.p, s.j = k, k+b
	return nil, conv, nil
}

// wantedActive is how many of the largest active Ritz values (theta,
// descending) are among the nev largest of the locked and active values.
func (s *krylov) wantedActive(theta []float64) int {
	locked := slices.Clone(s.lockVal)
	slices.Sort(locked)
	slices.Reverse(locked)
	q, l := 0, 0
	for q+l < s.nev {
		switch {
		case q < len(theta) && (l >= len(locked) || theta[q] > locked[l]):
			q++
		case l < len(locked):
			l++
		default:
			return q
		}
	}
	return q
}

// finish returns the nev largest locked pairs.
func (s *krylov) finish() *LanczosResult {
	n, nev := s.n, s.nev
	order := make([]int, s.nlock)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case s.lockVal[a] > s.lockVal[b]:
			return -1
		case s.lockVal[a] < s.lockVal[b]:
			return 1
		}
		return 0
	})
	res := &LanczosResult{N: n, Nev: nev, Values: make([]float64, nev), Vectors: make([]float64, n*nev),
		Residuals: make([]float64, nev), MatVecs: s.matvec}
	cols := make([]float64, nev*n)
	for q, i := range order[:nev] {
		res.Values[q] = s.lockVal[i]
		res.Residuals[q] = s.lockRes[i]
		copy(cols[q*n:(q+1)*n], s.v[i*n:(i+1)*n])
	}
	toNodeMajor(res.Vectors, cols, nev, n)
	return res
}
