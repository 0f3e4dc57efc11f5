package gnn

import (
	"math"
	"testing"
)

// TestGemmTiles checks the register tiles against a naive float64 product
// for both layouts of A (a·b and aᵀ·b), with and without accumulation,
// over row counts that leave remainders, reductions longer than one chunk
// and column counts with a 32-column tail; and that in the a·b layout
// every element is bit for bit what the row kernel gatherDense computes
// (the same fused multiply-adds in the same order).
func TestGemmTiles(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512")
	}
	rng := newRNG(11)
	for _, rows := range []int{4, 7, 12, 16} {
		for _, k := range []int{1, 5, 128, 129, 300} {
			for _, n := range []int{32, 64, 96, 160} {
				for _, trans := range []bool{false, true} {
					for _, acc := range []bool{false, true} {
						a := randTensor(rng, rows, k) // A = a, or A = aᵀ stored k×rows
						sar, saq := k, 1
						if trans {
							a = randTensor(rng, k, rows)
							sar, saq = 1, rows
						}
						b := randTensor(rng, k, n)
						d := randTensor(rng, rows, n)
						d0 := d.Clone()
						gotR, gotC := gemmTiles(d.Data, n, a.Data, sar, saq, b.Data, n, rows, k, n, acc, nil)
						if gotR != rows&^3 || gotC != n {
							t.Fatalf("rows=%d n=%d: tiles did %dx%d", rows, n, gotR, gotC)
						}
						for r := range rows {
							for j := range n {
								got := float64(d.At(r, j))
								if r >= gotR {
									if got != float64(d0.At(r, j)) {
										t.Fatalf("row %d beyond the tiles written", r)
									}
									continue
								}
								var want float64
								if acc {
									want = float64(d0.At(r, j))
								}
								for q := range k {
									want += float64(a.Data[r*sar+q*saq]) * float64(b.At(q, j))
								}
								if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
									t.Fatalf("rows=%d k=%d n=%d trans=%v acc=%v: (%d,%d) = %v, want %v", rows, k, n, trans, acc, r, j, got, want)
								}
							}
							if !trans && !acc && r < gotR {
								row := make([]float32, n)
								gatherDense(row, a.Row(r), b.Data, n)
								for j, v := range row {
									if math.Float32bits(v) != math.Float32bits(d.At(r, j)) {
										t.Fatalf("k=%d n=%d: (%d,%d) = %v, the row kernel gives %v", k, n, r, j, d.At(r, j), v)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmTilesBounds checks that a slice too short for the extents
// panics instead of reaching the assembly.
func TestGemmTilesBounds(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("short b did not panic")
		}
	}()
	a, b, d := make([]float32, 4*8), make([]float32, 7*32), make([]float32, 4*32)
	gemmTiles(d, 32, a, 8, 1, b, 32, 4, 8, 32, false, nil)
}

// TestMatMulTiledShapes runs the three products on shapes the tiles take
// (columns a multiple of 32, rows leaving remainders) against float64.
func TestMatMulTiledShapes(t *testing.T) {
	rng := newRNG(12)
	for _, s := range []struct{ m, k, n int }{{9, 5, 64}, {33, 256, 64}, {6, 64, 32}, {130, 47, 32}, {3, 64, 64}} {
		a, b := randTensor(rng, s.m, s.k), randTensor(rng, s.k, s.n)
		got := randTensor(rng, s.m, s.n)
		MatMul(got, a, b)
		assertClose(t, "matmul", got, mul64(rows64(a), rows64(b), s.k, s.n), 1e-5)
		// aᵀ·bm: k×n from m rows.
		bm := randTensor(rng, s.m, s.n)
		gotTN := randTensor(rng, s.k, s.n)
		MatMulTN(gotTN, a, bm)
		at := NewFrom(s.k, s.m, flatten64(transpose64(rows64(a), s.k)))
		assertClose(t, "matmul tn", gotTN, mul64(rows64(at), rows64(bm), s.m, s.n), 1e-5)
		bn := randTensor(rng, s.n, s.k)
		gotNT := randTensor(rng, s.m, s.n)
		MatMulNT(gotNT, a, bn)
		assertClose(t, "matmul nt", gotNT, mul64(rows64(a), transpose64(rows64(bn), s.k), s.k, s.n), 1e-5)
	}
}

// TestMatMulBias checks that MatMulBias is MatMul followed by AddBias, bit
// for bit, on shapes the tiles take (with remainder rows and a 32-column
// tail) and shapes they do not.
func TestMatMulBias(t *testing.T) {
	rng := newRNG(13)
	for _, s := range []struct{ m, k, n int }{{9, 5, 64}, {33, 256, 64}, {6, 300, 96}, {7, 47, 32}, {5, 8, 2}, {0, 4, 32}} {
		a, b, bias := randTensor(rng, s.m, s.k), randTensor(rng, s.k, s.n), randTensor(rng, 1, s.n)
		want := New(s.m, s.n)
		MatMul(want, a, b)
		AddBias(want, bias)
		got := randTensor(rng, s.m, s.n)
		MatMulBias(got, a, b, bias)
		for i, v := range want.Data {
			if math.Float32bits(v) != math.Float32bits(got.Data[i]) {
				t.Fatalf("%v: [%d] = %v, want %v", s, i, got.Data[i], v)
			}
		}
	}
}

// TestMatMulTNLastRows checks that MatMulTN's last one to three output
// rows (a.Cols not a multiple of four), which the tiles recompute with
// the four rows before them, equal bit for bit the rows of the product
// padded to a multiple of four columns, which the tiles take in whole
// groups.
func TestMatMulTNLastRows(t *testing.T) {
	rng := newRNG(14)
	for _, s := range []struct{ m, k, n int }{{300, 5, 32}, {17, 6, 64}, {129, 7, 32}, {64, 47, 64}, {40, 4, 32}} {
		a, bm := randTensor(rng, s.m, s.k), randTensor(rng, s.m, s.n)
		kp := (s.k + 3) &^ 3
		ap := New(s.m, kp)
		for i := range s.m {
			copy(ap.Row(i), a.Row(i))
		}
		got, want := randTensor(rng, s.k, s.n), New(kp, s.n)
		MatMulTN(got, a, bm)
		MatMulTN(want, ap, bm)
		for i, v := range got.Data {
			if math.Float32bits(v) != math.Float32bits(want.Data[i]) {
				t.Fatalf("%v: [%d] = %v, want %v", s, i, v, want.Data[i])
			}
		}
	}
}
