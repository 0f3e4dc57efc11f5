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
			GatherSparse(got, cols, a, b, n)
			gatherSparseFrom(0, want, cols, a, b, n)
			check("gather sparse", got, want)
			ad := a[:min(terms, rows)]
			gatherDense(got, ad, b, n)
			gatherDenseFrom(0, want, ad, b, n)
			check("gather dense", got, want)
			outG, outW := append([]float32(nil), b...), append([]float32(nil), b...)
			ScatterSparse(outG, cols, a, brow, n)
			scatterSparseFrom(0, outW, cols, a, brow, n)
			check("scatter sparse", outG, outW)
			outG, outW = append([]float32(nil), b...), append([]float32(nil), b...)
			scatterDense(outG, ad, brow, n)
			scatterDenseFrom(0, outW, ad, brow, n)
			check("scatter dense", outG, outW)
		}
	}
}

// TestScatterDense2 checks that the two-row scatter is bit for bit two
// one-row scatters in order, and that the gather kernel's pairs of
// 32-column blocks give what one block at a time gives (the Go loops
// beyond the wide columns being common to both).
func TestScatterDense2(t *testing.T) {
	rng := newRNG(8)
	for _, n := range []int{1, 31, 32, 64, 96, 100, 160} {
		for _, terms := range []int{1, 3, 8} {
			a0, a1 := randTensor(rng, 1, terms).Data, randTensor(rng, 1, terms).Data
			b0, b1 := randTensor(rng, 1, n).Data, randTensor(rng, 1, n).Data
			out := randTensor(rng, terms, n).Data
			got, want := append([]float32(nil), out...), append([]float32(nil), out...)
			scatterDense2(got, a0, a1, b0, b1, n)
			scatterDense(want, a0, b0, n)
			scatterDense(want, a1, b1, n)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d terms=%d: [%d] = %v, two scatters %v", n, terms, i, got[i], want[i])
				}
			}
			// Gather over 32-column slices one at a time: the same bits as
			// one call over all n (blocks paired or not).
			b := randTensor(rng, terms, n).Data
			whole, bySlice := make([]float32, n), make([]float32, n)
			gatherDense(whole, a0, b, n)
			for j := 0; j+32 <= n; j += 32 {
				blk := make([]float32, terms*32)
				for p := range terms {
					copy(blk[p*32:(p+1)*32], b[p*n+j:p*n+j+32])
				}
				gatherDense(bySlice[j:j+32], a0, blk, 32)
			}
			gatherDenseFrom(n&^31, bySlice, a0, b, n)
			if !haveFMA {
				gatherDenseFrom(0, bySlice, a0, b, n)
			}
			for i := range whole {
				if math.Float32bits(whole[i]) != math.Float32bits(bySlice[i]) {
					t.Fatalf("gather n=%d terms=%d: [%d] = %v, by 32-column slices %v", n, terms, i, whole[i], bySlice[i])
				}
			}
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
			"gather":  func() { GatherSparse(d, []int32{0, c}, []float32{1, 1}, b, n) },
			"scatter": func() { ScatterSparse(b, []int32{c}, []float32{1}, d, n) },
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
