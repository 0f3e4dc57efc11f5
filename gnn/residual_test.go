package gnn

import (
	"math"
	"testing"
)

// TestResidualReLURows checks the fused residual pass against the passes
// it replaces (AddBias, two row gathers with AddInto, ReLU, Add), bit for
// bit, on widths the assembly takes and widths it does not, with signed
// zeros and NaNs among the values; and that a bad row panics.
func TestResidualReLURows(t *testing.T) {
	rng := newRNG(41)
	for _, n := range []int{1, 16, 24, 32, 64} {
		rows, nodes := 9, 5
		u := randTensor(rng, rows, n)
		u.Data[0], u.Data[len(u.Data)-1] = float32(math.Copysign(0, -1)), float32(math.NaN())
		e, bias := randTensor(rng, rows, n), randTensor(rng, 1, n)
		hs, hd := randTensor(rng, nodes, n), randTensor(rng, nodes, n)
		src, dst := make([]int32, rows), make([]int32, rows)
		for k := range src {
			src[k], dst[k] = int32(rng.IntN(nodes)), int32(rng.IntN(nodes))
		}
		wantU := u.Clone()
		AddBias(wantU, bias)
		for k := range rows {
			AddInto(wantU.Row(k), hs.Row(int(src[k])))
			AddInto(wantU.Row(k), hd.Row(int(dst[k])))
		}
		wantOut := New(rows, n)
		ReLU(wantOut, wantU)
		Add(wantOut, wantOut, e)
		gotU, gotOut := u.Clone(), New(rows, n)
		ResidualReLURows(gotU.Data, gotOut.Data, e.Data, bias.Data, hs.Data, hd.Data, src, dst, n)
		for i := range wantU.Data {
			if math.Float32bits(gotU.Data[i]) != math.Float32bits(wantU.Data[i]) || math.Float32bits(gotOut.Data[i]) != math.Float32bits(wantOut.Data[i]) {
				t.Fatalf("n=%d [%d]: u %v out %v, want %v and %v", n, i, gotU.Data[i], gotOut.Data[i], wantU.Data[i], wantOut.Data[i])
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("row outside hs did not panic")
		}
	}()
	z := make([]float32, 64)
	ResidualReLURows(z, z, z, z[:16], z[:16], z[:16], []int32{1}, []int32{0}, 16)
}
