package gnn

import (
	"math"
	"testing"
)

// TestGatherSlots checks GatherSlots and GatherSlotsBias (several rows at a time in assembly
// where available) against GatherSparse row by row, bit for bit, with
// repeated columns, row counts that leave remainders and widths the
// assembly does not take; and that a bad column panics.
func TestGatherSlots(t *testing.T) {
	rng := newRNG(31)
	for _, n := range []int{1, 32, 33, 64, 96} {
		for _, k := range []int{1, 2, 13} {
			for _, rows := range []int{0, 1, 3, 4, 5, 9} {
				wr := 11
				w := randTensor(rng, wr, n).Data
				cols := make([]int32, rows*k)
				for i := range cols {
					cols[i] = int32(rng.IntN(wr))
				}
				if len(cols) > 1 {
					cols[1] = cols[0]
				}
				vals := randTensor(rng, 1, rows*k).Data
				got := randTensor(rng, rows, n).Data
				GatherSlots(got, cols, vals, k, w, n)
				bias := randTensor(rng, 1, n).Data
				gotB := randTensor(rng, rows, n).Data
				GatherSlotsBias(gotB, cols, vals, k, w, n, bias)
				want := make([]float32, n)
				for i := range rows {
					GatherSparse(want, cols[i*k:(i+1)*k], vals[i*k:(i+1)*k], w, n)
					for j, v := range want {
						if math.Float32bits(v) != math.Float32bits(got[i*n+j]) {
							t.Fatalf("n=%d k=%d rows=%d: (%d,%d) = %v, want %v", n, k, rows, i, j, got[i*n+j], v)
						}
					}
					AddInto(want, bias)
					for j, v := range want {
						if math.Float32bits(v) != math.Float32bits(gotB[i*n+j]) {
							t.Fatalf("bias n=%d k=%d rows=%d: (%d,%d) = %v, want %v", n, k, rows, i, j, gotB[i*n+j], v)
						}
					}
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("column outside w did not panic")
		}
	}()
	GatherSlots(make([]float32, 4*64), []int32{0, 1, 2, 9}, make([]float32, 4), 1, make([]float32, 3*64), 64)
}

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
