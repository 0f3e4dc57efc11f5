package spectral

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// clusterQR assigns each row of the n×k embedding y (row-major) to one of
// k clusters by Damle, Minden and Ying's CPQR method ("Simple, direct and
// efficient multi-way spectral clustering", 2019), as scikit-learn's
// assign_labels="cluster_qr" does: a column-pivoted QR of yᵀ picks k
// representative rows; the orthogonal polar factor Q of those rows rotates
// the embedding so that each cluster aligns with one axis; a row goes to
// the axis of its largest |(y·Q)_ij|. It returns the labels and |y·Q|
// (n×k row-major), the affinities rebalancing uses.
func clusterQR(y []float64, n, k int) ([]int32, []float64, error) {
	piv := pivotRows(y, n, k)
	// Polar factor of the k×k matrix Y[piv,:]ᵀ: U·Vᵀ from its SVD.
	sel := mat.NewDense(k, k, nil)
	for a, i := range piv {
		for c := 0; c < k; c++ {
			sel.Set(c, a, y[i*k+c])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(sel, mat.SVDFull) {
		return nil, nil, fmt.Errorf("spectral: cluster qr: SVD of the %d×%d pivot block did not converge", k, k)
	}
	var u, v, q mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	q.Mul(&u, v.T())
	labels := make([]int32, n)
	aff := make([]float64, n*k)
	for i := 0; i < n; i++ {
		row := y[i*k : (i+1)*k]
		best := -1.0
		for c := 0; c < k; c++ {
			var s float64
			for a, x := range row {
				s += x * q.At(a, c)
			}
			s = math.Abs(s)
			aff[i*k+c] = s
			if s > best {
				best, labels[i] = s, int32(c)
			}
		}
	}
	return labels, aff, nil
}

// pivotRows returns the first k pivots of a column-pivoted QR of yᵀ, that
// is greedy Gram–Schmidt on the rows of y (n×k): take the row of largest
// remaining norm, remove its direction from all rows, repeat. Ties go to
// the lowest row index. O(n·k²).
func pivotRows(y []float64, n, k int) []int {
	r := append([]float64(nil), y[:n*k]...)
	norms := make([]float64, n)
	for i := range norms {
		norms[i] = dot(r[i*k:(i+1)*k], r[i*k:(i+1)*k])
	}
	piv := make([]int, 0, k)
	used := make([]bool, n)
	for len(piv) < k {
		best := -1
		for i, v := range norms {
			if !used[i] && (best < 0 || v > norms[best]) {
				best = i
			}
		}
		piv = append(piv, best)
		used[best] = true
		p := append([]float64(nil), r[best*k:(best+1)*k]...)
		pn := math.Sqrt(dot(p, p))
		if pn == 0 {
			continue // rank exhausted: later pivots are arbitrary but distinct
		}
		scal(p, 1/pn)
		for i := 0; i < n; i++ {
			if used[i] {
				continue
			}
			row := r[i*k : (i+1)*k]
			axpy(row, -dot(row, p), p)
			norms[i] = dot(row, row)
		}
	}
	return piv
}
