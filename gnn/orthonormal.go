package gnn

import (
	"math"
	"math/rand/v2"
)

// OrthonormalColumns returns an n×r tensor (r ≤ n) whose columns are
// orthonormal: Gram–Schmidt, in float64, on columns of standard normal
// draws from rng, so the result is a function of rng's stream.
func OrthonormalColumns(rng *rand.Rand, n, r int) *Tensor {
	b := New(n, r)
	col := make([]float64, n)
	for q := range r {
		for j := range col {
			col[j] = rng.NormFloat64()
		}
		for p := range q {
			var dot float64
			for j := range col {
				dot += col[j] * float64(b.Data[j*r+p])
			}
			for j := range col {
				col[j] -= dot * float64(b.Data[j*r+p])
			}
		}
		var ss float64
		for _, x := range col {
			ss += x * x
		}
		inv := 1 / math.Sqrt(ss)
		for j, x := range col {
			b.Data[j*r+q] = float32(x * inv)
		}
	}
	return b
}
