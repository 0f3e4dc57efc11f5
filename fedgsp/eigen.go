package fedgsp

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// exactEigenLimit is the largest symmetric matrix topEigen decomposes in
// full. A full decomposition costs O(n³) with a large constant (about 2 s
// for n = 760 in gonum's pure-Go LAPACK, and a descriptor needs 2K+2 of
// them), while only the top few eigenpairs are wanted.
const exactEigenLimit = 256

// topEigen returns the k largest eigenvalues of the positive semi-definite
// matrix g, in decreasing order, and their unit eigenvectors as the columns
// of an n×k matrix (fewer than k when n < k). Up to size limit it takes a
// full decomposition; beyond, block subspace iteration with Rayleigh–Ritz
// (Golub & Van Loan §8.2.4), a block of k+16 vectors from a fixed seed, run
// until every wanted Ritz pair has residual ‖g·v − λ·v‖ ≤ 1e-8·λ_max (the
// descriptors are released with noise far above that).
func topEigen(g *mat.SymDense, k, limit int) ([]float64, *mat.Dense, error) {
	n := g.SymmetricDim()
	k = min(k, n)
	if n <= limit {
		var eig mat.EigenSym
		if !eig.Factorize(g, true) {
			return nil, nil, errors.New("eigendecomposition did not converge")
		}
		all := eig.Values(nil)
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		vals := make([]float64, k)
		out := mat.NewDense(n, max(k, 1), nil)
		for a := 0; a < k; a++ {
			vals[a] = all[n-1-a]
			out.SetCol(a, mat.Col(nil, n-1-a, &vecs))
		}
		return vals, out, nil
	}
	b := min(n, k+16)
	rng := rand.New(rand.NewPCG(0x5eed, uint64(n)))
	q := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < b; j++ {
			q.Set(i, j, rng.NormFloat64())
		}
	}
	orthonormalise(q)
	var y, t mat.Dense
	for it := 1; it <= 1000; it++ {
		y.Mul(g, q)
		if it%5 != 0 {
			orthonormalise(&y)
			q.Copy(&y)
			continue
		}
		// Rayleigh–Ritz on span(q): T = qᵀ g q.
		t.Mul(q.T(), &y)
		ts := mat.NewSymDense(b, nil)
		for i := 0; i < b; i++ {
			for j := i; j < b; j++ {
				ts.SetSym(i, j, (t.At(i, j)+t.At(j, i))/2)
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(ts, true) {
			return nil, nil, errors.New("Rayleigh–Ritz eigendecomposition did not converge")
		}
		all := eig.Values(nil)
		var w mat.Dense
		eig.VectorsTo(&w)
		var ritz mat.Dense
		ritz.Mul(q, &w) // Ritz vectors, ascending Ritz values
		vals := make([]float64, k)
		out := mat.NewDense(n, k, nil)
		top := math.Max(all[b-1], 0)
		done := true
		gv := mat.NewVecDense(n, nil)
		for a := 0; a < k; a++ {
			idx := b - 1 - a
			vals[a] = all[idx]
			v := ritz.ColView(idx)
			out.SetCol(a, mat.Col(nil, idx, &ritz))
			gv.MulVec(g, v)
			gv.AddScaledVec(gv, -all[idx], v)
			if mat.Norm(gv, 2) > 1e-8*top && significant(all[idx], top) {
				done = false
			}
		}
		if done || it == 1000 {
			if !done {
				return nil, nil, errors.New("subspace iteration did not converge in 1000 steps")
			}
			return vals, out, nil
		}
		q.Copy(&ritz)
		y.Mul(g, q)
		orthonormalise(&y)
		q.Copy(&y)
	}
	return nil, nil, errors.New("unreachable")
}

// orthonormalise replaces the columns of m by an orthonormal basis of their
// span: modified Gram–Schmidt, twice ("twice is enough", Giraud et al.
// 2005), on the transpose so that each column is contiguous. A column that
// is dependent on the earlier ones becomes zero.
func orthonormalise(m *mat.Dense) {
	_, c := m.Dims()
	cols := make([][]float64, c)
	for j := range cols {
		cols[j] = mat.Col(nil, j, m)
	}
	for pass := 0; pass < 2; pass++ {
		for j, v := range cols {
			for _, u := range cols[:j] {
				s := 0.0
				for i, x := range u {
					s += x * v[i]
				}
				for i, x := range u {
					v[i] -= s * x
				}
			}
			nv := 0.0
			for _, x := range v {
				nv += x * x
			}
			nv = math.Sqrt(nv)
			for i := range v {
				if nv > 1e-300 {
					v[i] /= nv
				} else {
					v[i] = 0
				}
			}
		}
	}
	for j, v := range cols {
		m.SetCol(j, v)
	}
}
