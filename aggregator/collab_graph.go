package aggregator

import (
	"math"
	"slices"
)

// The collaboration-graph mathematics of FedGSP (appendix III, with the
// summary's decisions 4–6): pure functions on float64, in a fixed order of
// operations, so that a restored machine recomputes bit for bit what the
// original would have.
//
// A client's descriptor for one graph is a subspace: kpr principal
// directions of length L (L = d for W^(k), K·d for W), as a kpr×L
// row-major matrix. Principal directions have no sign and, for equal
// singular values, no preferred basis, so everything below depends on the
// subspace only: the coordinate energies π[l] = Σ_a A[a,l]² (the diagonal
// of AᵀA) for the R and S steps, and principal-angle cosines for the
// similarities.

// projectSimplex is the Euclidean projection of v onto the probability
// simplex {w : w ≥ 0, Σ w = 1} (the sorted algorithm of Held, Wolfe and
// Crowder; Duchi et al. 2008): w = (v − τ)_+ with τ chosen so that w sums
// to 1. It is the exact solution of the KKT system the appendix solves
// with Newton steps on b̂_i (Eqs. 22–32), decision 6.
func projectSimplex(v []float64) []float64 {
	u := slices.Clone(v)
	slices.SortFunc(u, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	var sum, tau float64
	for j, x := range u {
		sum += x
		if t := (sum - 1) / float64(j+1); x-t > 0 {
			tau = t
		}
	}
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = max(x-tau, 0)
	}
	return w
}

// energies returns π[l] = Σ_a A[a,l]² of a kpr×L descriptor.
func energies(a []float32, l int) []float64 {
	pi := make([]float64, l)
	for i, x := range a {
		pi[i%l] += float64(x) * float64(x)
	}
	return pi
}

// laplacianForms returns, per coordinate l, the quadratic form of the
// collaboration graph's Laplacian L_c = D − (W+Wᵀ)/2 on the clients'
// energies: e_l = ½ Σ_ij w̃_ij (π_i[l] − π_j[l])², w̃ = (W+Wᵀ)/2
// (appendix Eq. 10 with π for p, decision 4). w is n×n row-major.
func laplacianForms(w []float64, pi [][]float64) []float64 {
	n := len(pi)
	e := make([]float64, len(pi[0]))
	for i := range n {
		for j := i + 1; j < n; j++ {
			ws := (w[i*n+j] + w[j*n+i]) / 2
			if ws == 0 {
				continue
			}
			for l := range e {
				d := pi[i][l] - pi[j][l]
				e[l] += ws * d * d // each unordered pair once: ½·2
			}
		}
	}
	return e
}

// inverseWeights is the R step (and, decision 5, the S step): r_l ∝ 1/e_l
// on the simplex (appendix Eqs. 7–9). A form of 0 (a coordinate on which
// every client agrees exactly) would take all the weight; forms are
// floored at 1e-6 of their mean so that the weights stay finite, and all
// zero forms give uniform weights.
func inverseWeights(e []float64) []float64 {
	var mean float64
	for _, x := range e {
		mean += x
	}
	mean /= float64(len(e))
	r := make([]float64, len(e))
	if !(mean > 0) {
		for l := range r {
			r[l] = 1 / float64(len(r))
		}
		return r
	}
	floor := 1e-6 * mean
	var sum float64
	for l, x := range e {
		r[l] = 1 / max(x, floor)
		sum += r[l]
	}
	for l := range r {
		r[l] /= sum
	}
	return r
}

// weightedBasis returns an orthonormal basis (as rows) of the span of the
// descriptor's rows scaled coordinate-wise by r (R p_i), by modified
// Gram–Schmidt applied twice; rows that add no direction (zero padding,
// dependent rows) are dropped.
func weightedBasis(a []float32, r []float64) [][]float64 {
	l := len(r)
	var q [][]float64
	for row := 0; row+l <= len(a); row += l {
		v := make([]float64, l)
		var n0 float64
		for i := range v {
			v[i] = float64(a[row+i]) * r[i]
			n0 += v[i] * v[i]
		}
		if !(n0 > 0) {
			continue
		}
		for range 2 {
			for _, b := range q {
				var d float64
				for i := range v {
					d += v[i] * b[i]
				}
				for i := range v {
					v[i] -= d * b[i]
				}
			}
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		if n <= 1e-20*n0 {
			continue
		}
		n = math.Sqrt(n)
		for i := range v {
			v[i] /= n
		}
		q = append(q, v)
	}
	return q
}

// subspaceSimilarity is the mean cosine of the principal angles between
// two subspaces given by orthonormal bases: the singular values of
// Q_i Q_jᵀ, summed and divided by the larger dimension (a direction one
// subspace lacks counts as orthogonal). It lies in [0, 1], is 1 for equal
// subspaces, and ignores signs and rotations within each (decision 4).
func subspaceSimilarity(qi, qj [][]float64) float64 {
	ri, rj := len(qi), len(qj)
	if ri == 0 || rj == 0 {
		return 0
	}
	m := make([]float64, ri*rj)
	for a := range ri {
		for b := range rj {
			var d float64
			for l, x := range qi[a] {
				d += x * qj[b][l]
			}
			m[a*rj+b] = d
		}
	}
	// The singular values of m are the square roots of the eigenvalues
	// of the small symmetric m·mᵀ.
	g := make([]float64, ri*ri)
	for a := range ri {
		for b := range ri {
			var d float64
			for c := range rj {
				d += m[a*rj+c] * m[b*rj+c]
			}
			g[a*ri+b] = d
		}
	}
	var sum float64
	for _, ev := range symmetricEigenvalues(g, ri) {
		sum += math.Sqrt(min(max(ev, 0), 1))
	}
	return min(sum/float64(max(ri, rj)), 1)
}

// symmetricEigenvalues returns the eigenvalues of the symmetric n×n
// matrix a (row-major, overwritten) by cyclic Jacobi rotations.
func symmetricEigenvalues(a []float64, n int) []float64 {
	for range 64 {
		var off, diag float64
		for p := range n {
			diag += a[p*n+p] * a[p*n+p]
			for q := p + 1; q < n; q++ {
				off += a[p*n+q] * a[p*n+q]
			}
		}
		if off <= 1e-30*max(diag, 1e-300) {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if apq == 0 {
					continue
				}
				theta := (a[q*n+q] - a[p*n+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := a[k*n+p], a[k*n+q]
					a[k*n+p], a[k*n+q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n {
					apk, aqk := a[p*n+k], a[q*n+k]
					a[p*n+k], a[q*n+k] = c*apk-s*aqk, s*apk+c*aqk
				}
			}
		}
	}
	ev := make([]float64, n)
	for i := range n {
		ev[i] = a[i*n+i]
	}
	return ev
}

// graphStep is one alternating pass of FedGSP's graph learning over n
// clients (appendix III): from the current graph w (n×n row-major) and
// each client's sharing descriptor p_i and complementing descriptor q_i
// (kpr×L each), the R step (r ∝ 1/e, e the Laplacian forms of the
// sharing energies), the S step (s ∝ 1/n on the complementing ones), then
// t_ij = α·sim(Sq_i, Sq_j) − β·sim(Rp_i, Rp_j) and each row projected:
// w_i = Π_simplex(−t_i/(2γ)), w_ii included. It returns the new graph.
func graphStep(w []float64, p, q [][]float32, l int, alpha, beta, gamma float64) []float64 {
	n := len(p)
	piP := make([][]float64, n)
	piQ := make([][]float64, n)
	for i := range n {
		piP[i], piQ[i] = energies(p[i], l), energies(q[i], l)
	}
	r := inverseWeights(laplacianForms(w, piP))
	s := inverseWeights(laplacianForms(w, piQ))
	bp := make([][][]float64, n)
	bq := make([][][]float64, n)
	for i := range n {
		bp[i], bq[i] = weightedBasis(p[i], r), weightedBasis(q[i], s)
	}
	t := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			v := alpha*subspaceSimilarity(bq[i], bq[j]) - beta*subspaceSimilarity(bp[i], bp[j])
			t[i*n+j], t[j*n+i] = v, v
		}
	}
	out := make([]float64, 0, n*n)
	row := make([]float64, n)
	for i := range n {
		for j := range n {
			row[j] = -t[i*n+j] / (2 * gamma)
		}
		out = append(out, projectSimplex(row)...)
	}
	return out
}

// uniformGraph is the initial graph (11ᵀ − I)/(n − 1) (for one client:
// itself alone).
func uniformGraph(n int) []float64 {
	w := make([]float64, n*n)
	for i := range n {
		for j := range n {
			switch {
			case n == 1:
				w[i*n+j] = 1
			case i != j:
				w[i*n+j] = 1 / float64(n-1)
			}
		}
	}
	return w
}
