package edgegnn

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"graphfed/gnn"
)

// TestEdgeProductsMatchGNN checks edgeMatMul and edgeMatMulBias against
// gnn.MatMul and gnn.MatMulBias, bit for bit, over row counts with and
// without an odd last row, inner sizes down to 1, 32- to 96-column
// outputs, zeros, NaNs, infinities and negative zeros in the inputs,
// and sizes gnn splits across goroutines.
func TestEdgeProductsMatchGNN(t *testing.T) {
	for _, tc := range []struct{ m, k, n int }{
		{1, 1, 32}, {2, 1, 32}, {3, 5, 32}, {7, 32, 32}, {8, 106, 32}, {5, 47, 64},
		{9, 64, 64}, {4, 128, 32}, {6, 3, 96}, {1, 256, 64}, {0, 4, 32}, {600, 64, 64},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", tc.m, tc.k, tc.n), func(t *testing.T) {
			rng := newRNG(uint64(tc.m*1000 + tc.k*10 + tc.n))
			a, b := randTensor(rng, tc.m, tc.k), randTensor(rng, tc.k, tc.n)
			bias := randTensor(rng, 1, tc.n)
			for i := range a.Data {
				switch i % 11 {
				case 3:
					a.Data[i] = 0
				case 7:
					a.Data[i] = float32(math.Copysign(0, -1))
				}
			}
			if len(a.Data) > 20 {
				a.Data[17] = float32(math.NaN())
				b.Data[5] = float32(math.Inf(1))
			}
			want, got := gnn.New(tc.m, tc.n), gnn.New(tc.m, tc.n)
			gnn.MatMul(want, a, b)
			edgeMatMul(got, a, b)
			if !sameBits(got.Data, want.Data) {
				t.Fatal("edgeMatMul differs from gnn.MatMul")
			}
			gnn.MatMulBias(want, a, b, bias)
			edgeMatMulBias(got, a, b, bias)
			if !sameBits(got.Data, want.Data) {
				t.Fatal("edgeMatMulBias differs from gnn.MatMulBias")
			}
		})
	}
}

// sameBits reports whether x and y hold the same float32 bit patterns.
func sameBits(x, y []float32) bool {
	return slices.EqualFunc(x, y, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
}
