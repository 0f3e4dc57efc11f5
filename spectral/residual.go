package spectral

import (
	"fmt"
	"math"
)

// Residuals returns ‖L·v_q − λ_q·v_q‖₂ for every eigenpair of e, computed
// directly from the sparse Laplacian (one product with the N×Φ block), so
// that it checks the solver rather than trusting its estimates.
func Residuals(l *Laplacian, e *Eigenpairs) ([]float64, error) {
	n, phi := l.N(), e.Phi
	if e.N != n || len(e.Values) != phi || len(e.Vectors) != n*phi {
		return nil, fmt.Errorf("spectral: residuals: eigenpairs of shape %d×%d (%d values, %d entries) for a %d-node Laplacian",
			e.N, phi, len(e.Values), len(e.Vectors), n)
	}
	lv := make([]float64, n*phi)
	l.Apply(lv, e.Vectors, phi)
	for i := 0; i < n; i++ {
		row, v := lv[i*phi:(i+1)*phi], e.Vectors[i*phi:(i+1)*phi]
		for q := range row {
			row[q] -= e.Values[q] * v[q]
		}
	}
	out := make([]float64, phi)
	cols := make([]float64, n*phi)
	toVectorMajor(cols, lv, phi, n)
	for q := range out {
		out[q] = norm(cols[q*n : (q+1)*n])
	}
	return out, nil
}

// MaxResidual is the largest of Residuals.
func MaxResidual(l *Laplacian, e *Eigenpairs) (float64, error) {
	r, err := Residuals(l, e)
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for _, x := range r {
		if math.IsNaN(x) {
			return x, nil
		}
		worst = max(worst, x)
	}
	return worst, nil
}

// Orthogonality returns max |VᵀV − I| over the Φ×Φ Gram matrix of the
// eigenvectors: how far they are from orthonormal.
func Orthogonality(e *Eigenpairs) float64 {
	n, phi := e.N, e.Phi
	cols := make([]float64, n*phi)
	toVectorMajor(cols, e.Vectors, phi, n)
	g := make([]float64, phi*phi)
	gram(g, phi, cols, phi, cols, phi, n)
	worst := 0.0
	for i := 0; i < phi; i++ {
		for j := 0; j < phi; j++ {
			d := g[i*phi+j]
			if i == j {
				d--
			}
			worst = max(worst, math.Abs(d))
		}
	}
	return worst
}
