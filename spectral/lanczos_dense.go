package spectral

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// denseFloor: a wanted set too close to n for a Lanczos basis is solved
// densely up to this dimension even when DenseMax and DenseLimit are set
// lower.
const denseFloor = 2500

// denseLargest materializes op and returns its nev largest eigenpairs.
func denseLargest(op Operator, nev int) (*LanczosResult, error) {
	n := op.Dim()
	a := denseOf(op)
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		return nil, fmt.Errorf("spectral: lanczos: dense %d×%d eigenproblem did not converge", n, n)
	}
	asc := es.Values(nil)
	var ev mat.Dense
	es.VectorsTo(&ev)
	res := &LanczosResult{N: n, Nev: nev, Values: make([]float64, nev), Vectors: make([]float64, n*nev),
		Residuals: make([]float64, nev), MatVecs: n, Dense: true}
	for q := 0; q < nev; q++ {
		col := n - 1 - q
		res.Values[q] = asc[col]
		for i := 0; i < n; i++ {
			res.Vectors[i*nev+q] = ev.At(i, col)
		}
	}
	return res, nil
}

// denseOf applies op to the identity, a block of columns at a time, and
// returns the symmetric part (A + Aᵀ)/2 of the result.
func denseOf(op Operator) *mat.SymDense {
	n := op.Dim()
	const cols = 32
	full := make([]float64, n*n) // column j at full[j*n:(j+1)*n]
	src := make([]float64, n*cols)
	dst := make([]float64, n*cols)
	for c0 := 0; c0 < n; c0 += cols {
		k := min(cols, n-c0)
		clear(src[:n*k])
		for q := 0; q < k; q++ {
			src[(c0+q)*k+q] = 1
		}
		op.MulBlock(dst[:n*k], src[:n*k], k)
		for q := 0; q < k; q++ {
			for i := 0; i < n; i++ {
				full[(c0+q)*n+i] = dst[i*k+q]
			}
		}
	}
	a := mat.NewSymDense(n, nil)
	for j := 0; j < n; j++ {
		for i := 0; i <= j; i++ {
			a.SetSym(i, j, (full[j*n+i]+full[i*n+j])/2)
		}
	}
	return a
}
