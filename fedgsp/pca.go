package fedgsp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// principal returns the top kpr principal directions of the n×cols matrix c
// (rows are observations): the right singular vectors of the column-centred
// matrix, unit norm, in decreasing singular value, each row of length cols.
// Directions beyond the matrix's numerical rank are zero rows, so a client
// with fewer than kpr nodes still sends kpr rows. c is centred in place.
//
// The route is the smaller Gram matrix (summary step 8; pca_torch takes a
// full SVD): when n < cols the n×n matrix G = C·Cᵀ = U Σ² Uᵀ gives
// v_a = Cᵀu_a/σ_a, otherwise the cols×cols covariance Cᵀ·C gives v_a
// directly. The sign of a direction is arbitrary; it is fixed here so that
// the coordinate of largest magnitude is positive, which makes the output
// deterministic (the server must still be sign invariant).
func principal(c *mat.Dense, kpr int) ([][]float64, error) {
	n, cols := c.Dims()
	centre(c)
	if n < cols {
		g := mat.NewSymDense(n, nil)
		g.SymOuterK(1, c)
		return principalGram(c, g, kpr)
	}
	cov := mat.NewSymDense(cols, nil)
	cov.SymOuterK(1, c.T())
	vals, vecs, err := topEigen(cov, kpr, exactEigenLimit)
	if err != nil {
		return nil, fmt.Errorf("fedgsp: pca: %dx%d covariance: %w", cols, cols, err)
	}
	out := make([][]float64, kpr)
	for a := 0; a < kpr; a++ {
		out[a] = make([]float64, cols)
		if a >= len(vals) || !significant(vals[a], vals[0]) {
			continue
		}
		mat.Col(out[a], a, vecs)
		fixSign(out[a])
	}
	return out, nil
}

// principalGram is principal's n < cols route from a precomputed Gram
// matrix g = C·Cᵀ of the centred c.
func principalGram(c *mat.Dense, g *mat.SymDense, kpr int) ([][]float64, error) {
	n, cols := c.Dims()
	vals, vecs, err := topEigen(g, kpr, exactEigenLimit)
	if err != nil {
		return nil, fmt.Errorf("fedgsp: pca: %dx%d Gram matrix: %w", n, n, err)
	}
	out := make([][]float64, kpr)
	u := make([]float64, n)
	for a := 0; a < kpr; a++ {
		out[a] = make([]float64, cols)
		if a >= len(vals) || !significant(vals[a], vals[0]) {
			continue
		}
		mat.Col(u, a, vecs)
		v := mat.NewVecDense(cols, out[a])
		v.MulVec(c.T(), mat.NewVecDense(n, u))
		if nv := mat.Norm(v, 2); nv > 0 {
			v.ScaleVec(1/nv, v)
		}
		fixSign(out[a])
	}
	return out, nil
}

// significant reports whether eigenvalue λ of a Gram or covariance matrix
// whose largest eigenvalue is top belongs to a direction of the data rather
// than to rounding (rank deficiency).
func significant(lambda, top float64) bool {
	return top > 0 && lambda > 1e-10*top
}

// centre subtracts every column's mean over the rows.
func centre(c *mat.Dense) {
	n, cols := c.Dims()
	if n == 0 {
		return
	}
	mean := make([]float64, cols)
	for i := 0; i < n; i++ {
		for j, v := range c.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		row := c.RawRowView(i)
		for j := range row {
			row[j] -= mean[j]
		}
	}
}

// fixSign flips v so that its entry of largest magnitude is positive.
func fixSign(v []float64) {
	best, at := 0.0, -1
	for i, x := range v {
		if math.Abs(x) > best {
			best, at = math.Abs(x), i
		}
	}
	if at >= 0 && v[at] < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
}
