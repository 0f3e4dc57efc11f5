package edgegnn

import (
	"fmt"
	"math"
	"testing"

	"graphfed/gnn"
)

// specials fills every fifth element of x with a signed zero, infinity or
// NaN of either sign, so that the bit operations meet every case.
func specials(x []float32) {
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0xffc00001), 1e-42, -1e-42}
	for i := 0; i < len(x); i += 5 {
		x[i] = sp[(i/5)%len(sp)]
	}
}

// TestEdgeReLUMatchesGNN checks edgeReLU against gnn.ReLU bit for bit,
// over lengths with and without a tail past the last multiple of 8.
func TestEdgeReLUMatchesGNN(t *testing.T) {
	for _, n := range []int{1, 7, 8, 31, 32, 100, 2048} {
		x := randTensor(newRNG(uint64(n)), 1, n)
		specials(x.Data)
		want, got := gnn.New(1, n), gnn.New(1, n)
		gnn.ReLU(want, x)
		edgeReLU(got, x)
		if !sameBits(got.Data, want.Data) {
			t.Fatalf("n=%d: edgeReLU differs from gnn.ReLU", n)
		}
	}
}

// TestEdgeResidualReLUMatchesGNN checks edgeResidualReLU against
// gnn.ResidualReLURows bit for bit, both outputs, for several widths and
// row counts, rows gathered in any order and repeated.
func TestEdgeResidualReLUMatchesGNN(t *testing.T) {
	for _, tc := range []struct{ rows, nodes, n int }{{1, 1, 8}, {5, 3, 32}, {40, 9, 64}, {7, 4, 24}, {6, 6, 5}, {0, 2, 32}} {
		t.Run(fmt.Sprintf("%dx%d", tc.rows, tc.n), func(t *testing.T) {
			rng := newRNG(uint64(tc.rows*100 + tc.n))
			u := randTensor(rng, tc.rows, tc.n)
			e := randTensor(rng, tc.rows, tc.n)
			hs, hd := randTensor(rng, tc.nodes, tc.n), randTensor(rng, tc.nodes, tc.n)
			bias := randTensor(rng, 1, tc.n)
			specials(u.Data)
			specials(hd.Data)
			src, dst := make([]int32, tc.rows), make([]int32, tc.rows)
			for k := range src {
				src[k], dst[k] = int32(rng.IntN(tc.nodes)), int32(rng.IntN(tc.nodes))
			}
			uw, ug := u.Clone(), u.Clone()
			ow, og := gnn.New(tc.rows, tc.n), gnn.New(tc.rows, tc.n)
			gnn.ResidualReLURows(uw.Data, ow.Data, e.Data, bias.Data, hs.Data, hd.Data, src, dst, tc.n)
			edgeResidualReLU(ug.Data, og.Data, e.Data, bias.Data, hs.Data, hd.Data, src, dst, tc.n)
			if !sameBits(ug.Data, uw.Data) || !sameBits(og.Data, ow.Data) {
				t.Fatal("edgeResidualReLU differs from gnn.ResidualReLURows")
			}
		})
	}
}
