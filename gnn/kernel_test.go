package gnn

import (
	"math"
	"testing"
)

// TestKernelsWide checks the kernels (assembly for the leading multiples
// of 32 columns where available) against their Go loops over all columns:
// equal up to the rounding of fused multiply-adds, with repeated rows.
func TestKernelsWide(t *testing.T) {
	rng := newRNG(4)
	for _, n := range []int{1, 8, 31, 32, 33, 64, 72, 128} {
		for _, terms := range []int{0, 1, 5, 13} {
			rows := 7
			b := randTensor(rng, rows, n).Data
			a := randTensor(rng, 1, terms).Data
			cols := make([]int32, terms)
			for k := range cols {
				cols[k] = int32(rng.IntN(rows))
			}
			if terms > 2 {
				cols[2] = cols[0] // a repeated row: scatters must add twice
			}
			brow := randTensor(rng, 1, n).Data
			check := func(name string, got, want []float32) {
				t.Helper()
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("n=%d terms=%d %s[%d] = %v, want %v", n, terms, name, i, got[i], want[i])
					}
				}
			}
			got, want := make([]float32, n), make([]float32, n)
			gatherSparse(got, cols, a, b, n)
			gatherSparseFrom(0, want, cols, a, b, n)
			check("gather sparse", got, want)
			ad := a[:min(terms, rows)]
			gatherDense(got, ad, b, n)
			gatherDenseFrom(0, want, ad, b, n)
			check("gather dense", got, want)
			outG, outW := append([]float32(nil), b...), append([]float32(nil), b...)
			scatterSparse(outG, cols, a, brow, n)
			scatterSparseFrom(0, outW, cols, a, brow, n)
			check("scatter sparse", outG, outW)
			outG, outW = append([]float32(nil), b...), append([]float32(nil), b...)
			scatterDense(outG, ad, brow, n)
			scatterDenseFrom(0, outW, ad, brow, n)
			check("scatter dense", outG, outW)
		}
	}
}

// TestKernelsBadRow checks that a row index outside the matrix panics
// rather than reaching memory past it.
func TestKernelsBadRow(t *testing.T) {
	const n = 64
	b := make([]float32, 3*n)
	d := make([]float32, n)
	for _, c := range []int32{3, -1} {
		for name, f := range map[string]func(){
			"gather":  func() { gatherSparse(d, []int32{0, c}, []float32{1, 1}, b, n) },
			"scatter": func() { scatterSparse(b, []int32{c}, []float32{1}, d, n) },
			"dense":   func() { gatherDense(d, make([]float32, 4), b, n) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with row %d: no panic", name, c)
					}
				}()
				f()
			}()
		}
	}
}
