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

// TestEdgeAddScaledMatchesGNN checks edgeAddScaled against
// gnn.AddScaled bit for bit, with and without a tail.
func TestEdgeAddScaledMatchesGNN(t *testing.T) {
	for _, n := range []int{1, 7, 8, 33, 2048} {
		rng := newRNG(uint64(n) + 7)
		d, s := randTensor(rng, 1, n), randTensor(rng, 1, n)
		specials(d.Data)
		specials(s.Data[1:])
		want, got := d.Clone(), d.Clone()
		gnn.AddScaled(want, 1.0625, s)
		edgeAddScaled(got, 1.0625, s)
		if !sameBits(got.Data, want.Data) {
			t.Fatalf("n=%d: edgeAddScaled differs from gnn.AddScaled", n)
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

// TestGatherRowsMatchGNN checks the block gather against
// gnn.GatherSparseRows (messages: rows with no, one or many terms, into a
// column block of a wider tensor, a sub-range of the targets) and
// gnn.GatherSlotsBias (slot rows with and without a bias), bit for bit.
func TestGatherRowsMatchGNN(t *testing.T) {
	for _, n := range []int{32, 64, 96, 8} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			rng := newRNG(uint64(n))
			const targets, srcRows = 9, 13
			b := randTensor(rng, srcRows, n)
			specials(b.Data)
			ptr := []int{0}
			var cols []int32
			var vals []float32
			for tg := range targets {
				for range (tg * 7) % 6 { // 0 to 5 terms
					cols = append(cols, int32(rng.IntN(srcRows)))
					vals = append(vals, float32(rng.NormFloat64()))
				}
				ptr = append(ptr, len(cols))
			}
			width := 2*n + 3
			for _, r := range [][2]int{{0, targets}, {2, 7}, {4, 5}} {
				want, got := randTensor(rng, targets, width), randTensor(rng, targets, width)
				copy(got.Data, want.Data)
				gnn.GatherSparseRows(want.Data, width, n+1, ptr, cols, vals, b.Data, n, r[0], r[1])
				if !gatherRows(got.Data, width, n+1, ptr, cols, vals, b.Data, n, r[0], r[1], nil) {
					got = want.Clone() // no AVX2 or not a multiple of 32: gnn's kernel runs
				}
				if !sameBits(got.Data, want.Data) {
					t.Fatalf("rows %v: gatherRows differs from gnn.GatherSparseRows", r)
				}
			}
			// Slot rows: K terms each.
			const rows, K = 7, 5
			sc := make([]int32, rows*K)
			sv := make([]float32, rows*K)
			sptr := make([]int, rows+1)
			for i := range sc {
				sc[i], sv[i] = int32(rng.IntN(srcRows)), float32(rng.NormFloat64())
			}
			for i := range sptr {
				sptr[i] = i * K
			}
			bias := randTensor(rng, 1, n).Data
			for _, bs := range [][]float32{nil, bias} {
				want, got := gnn.New(rows, n), gnn.New(rows, n)
				gnn.GatherSlotsBias(want.Data, sc, sv, K, b.Data, n, bs)
				if !gatherRows(got.Data, n, 0, sptr, sc, sv, b.Data, n, 0, rows, bs) {
					continue
				}
				if !sameBits(got.Data, want.Data) {
					t.Fatalf("bias %v: gatherRows differs from gnn.GatherSlotsBias", bs != nil)
				}
			}
		})
	}
}
