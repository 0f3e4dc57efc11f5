//go:build amd64 && !purego

package gnn

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// The kernels of kernel.go hand their leading multiple of 32 columns to
// the AVX2/FMA loops of kernel_amd64.s when the CPU and OS support them:
// eight lanes per instruction and a fused multiply-add did in one
// instruction what the scalar Go loop does in sixteen (measured on the
// edge model's step benchmark: the kernels were two thirds of a step).
// The wrappers check every row index and length the assembly trusts, so
// a bad index panics as the Go kernels' bounds checks would.

//go:noescape
func gatherSparseFMA(d, b *float32, cols *int32, vals *float32, nk, stride, blocks int)

//go:noescape
func gatherDenseFMA(d, b, a *float32, na, stride, blocks int)

//go:noescape
func scatterSparseFMA(out, brow *float32, cols *int32, vals *float32, nk, stride, blocks int)

//go:noescape
func scatterDenseFMA(out, brow, a *float32, na, stride, blocks int)

//go:noescape
func scatterDense2FMA(out, b0, b1, a0, a1 *float32, na, stride, blocks int)

// haveFMA reports AVX2 and FMA in the CPU with YMM state saved by the OS
// (golang.org/x/sys/cpu checks both). Set once at start-up and read-only
// afterwards.
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// wideCols is the number of leading columns of an n-column kernel the
// assembly computes: n rounded down to a multiple of 32, or 0.
func wideCols(n, terms int) int {
	if !haveFMA || terms == 0 {
		return 0
	}
	return n &^ 31
}

func checkRows(op string, cols []int32, rows int) {
	for _, c := range cols {
		if uint(int(c)) >= uint(rows) {
			panic(fmt.Sprintf("gnn: %s: row %d outside [0,%d)", op, c, rows))
		}
	}
}

func checkLen(op string, have, want int) {
	if have < want {
		panic(fmt.Sprintf("gnn: %s: %d values where %d are read", op, have, want))
	}
}

// gatherSparseWide computes the first wideCols columns of GatherSparse and
// returns their number.
func gatherSparseWide(d []float32, cols []int32, vals []float32, b []float32, n int) int {
	w := wideCols(n, len(cols))
	if w == 0 {
		return 0
	}
	z := gatherSparse512Wide(d, cols, vals, b, n)
	if z == w {
		return w
	}
	checkLen("gather sparse", len(d), n)
	checkLen("gather sparse", len(vals), len(cols))
	checkRows("gather sparse", cols, len(b)/n)
	gatherSparseFMA(&d[z], &b[z], &cols[0], &vals[0], len(cols), n, (w-z)/32)
	return w
}

// gatherDenseWide computes the first wideCols columns of gatherDense.
func gatherDenseWide(d []float32, a []float32, b []float32, n int) int {
	w := wideCols(n, len(a))
	if w == 0 {
		return 0
	}
	checkLen("gather dense", len(d), n)
	checkLen("gather dense", len(b), len(a)*n)
	gatherDenseFMA(&d[0], &b[0], &a[0], len(a), n, w/32)
	return w
}

// scatterSparseWide computes the first wideCols columns of ScatterSparse.
func scatterSparseWide(out []float32, cols []int32, vals []float32, brow []float32, n int) int {
	w := wideCols(n, len(cols))
	if w == 0 {
		return 0
	}
	z := scatterSparse512Wide(out, cols, vals, brow, n)
	if z == w {
		return w
	}
	checkLen("scatter sparse", len(brow), n)
	checkLen("scatter sparse", len(vals), len(cols))
	checkRows("scatter sparse", cols, len(out)/n)
	scatterSparseFMA(&out[z], &brow[z], &cols[0], &vals[0], len(cols), n, (w-z)/32)
	return w
}

// scatterDenseWide computes the first wideCols columns of scatterDense.
func scatterDenseWide(out []float32, a []float32, brow []float32, n int) int {
	w := wideCols(n, len(a))
	if w == 0 {
		return 0
	}
	checkLen("scatter dense", len(brow), n)
	checkLen("scatter dense", len(out), len(a)*n)
	scatterDenseFMA(&out[0], &brow[0], &a[0], len(a), n, w/32)
	return w
}

// scatterDense2Wide computes the first wideCols columns of scatterDense2.
func scatterDense2Wide(out, a0, a1, b0, b1 []float32, n int) int {
	w := wideCols(n, len(a0))
	if w == 0 {
		return 0
	}
	checkLen("scatter dense", len(a1), len(a0))
	checkLen("scatter dense", len(b0), n)
	checkLen("scatter dense", len(b1), n)
	checkLen("scatter dense", len(out), len(a0)*n)
	scatterDense2FMA(&out[0], &b0[0], &b1[0], &a0[0], &a1[0], len(a0), n, w/32)
	return w
}

// gatherSparseWideChecked and scatterSparseWideChecked are
// gatherSparseWide and scatterSparseWide for columns the caller has
// checked already (GatherSparseRows, ScatterSparseRows check a whole
// block's once instead of every row's).
func gatherSparseWideChecked(d []float32, cols []int32, vals []float32, b []float32, n int) int {
	w := wideCols(n, len(cols))
	if w == 0 {
		return 0
	}
	checkLen("gather sparse", len(d), n)
	checkLen("gather sparse", len(vals), len(cols))
	z := 0
	if haveAVX512 && w >= 64 {
		z = w &^ 63
		gatherSparse512(&d[0], &b[0], &cols[0], &vals[0], len(cols), n, z/64)
	}
	if z < w {
		gatherSparseFMA(&d[z], &b[z], &cols[0], &vals[0], len(cols), n, (w-z)/32)
	}
	return w
}

func scatterSparseWideChecked(out []float32, cols []int32, vals []float32, brow []float32, n int) int {
	w := wideCols(n, len(cols))
	if w == 0 {
		return 0
	}
	checkLen("scatter sparse", len(brow), n)
	checkLen("scatter sparse", len(vals), len(cols))
	z := 0
	if haveAVX512 && w >= 64 {
		z = w &^ 63
		scatterSparse512(&out[0], &brow[0], &cols[0], &vals[0], len(cols), n, z/64)
	}
	if z < w {
		scatterSparseFMA(&out[z], &brow[z], &cols[0], &vals[0], len(cols), n, (w-z)/32)
	}
	return w
}

// The whole-block bodies of GatherSparseRows and ScatterSparseRows (rows_amd64.s).

//go:noescape
func gatherRows32(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func gatherRows64(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func scatterRows32(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func scatterRows64(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)

// rowsWideOK reports whether the whole-block kernels of rows_amd64.s can
// run rows [lo, hi) of a block of n columns whose strided side (d or g,
// stride ld, columns from c0) has length strided: AVX-512, n 32 or 64, the
// strided side long enough, ptr not decreasing (so every term lies in
// [ptr[lo], ptr[hi]], whose columns the caller checked). Otherwise the
// caller runs its rows one call each.
func rowsWideOK(ptr []int, strided, ld, c0, n, lo, hi int) bool {
	if !haveAVX512 || (n != 32 && n != 64) || c0 < 0 || ld < c0+n || (hi-1)*ld+c0+n > strided {
		return false
	}
	for t := lo; t < hi; t++ {
		if ptr[t+1] < ptr[t] {
			return false
		}
	}
	return true
}

// gatherRowsWide is GatherSparseRows' body in one assembly call when
// rowsWideOK; it reports whether it ran. The columns must be checked.
func gatherRowsWide(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) bool {
	if !rowsWideOK(ptr, len(d), ld, c0, n, lo, hi) || len(vals) < ptr[hi] || len(cols) < ptr[hi] {
		return false
	}
	if ptr[hi] == ptr[lo] { // no terms: rows of zeros, and cols may be empty
		for t := lo; t < hi; t++ {
			clear(d[t*ld+c0 : t*ld+c0+n])
		}
		return true
	}
	dp, cp, vp := &d[lo*ld+c0], &cols[0], &vals[0]
	if n == 64 {
		gatherRows64(dp, ld, &b[0], cp, vp, &ptr[lo], hi-lo)
	} else {
		gatherRows32(dp, ld, &b[0], cp, vp, &ptr[lo], hi-lo)
	}
	return true
}

// scatterRowsWide is ScatterSparseRows' body in one assembly call when
// rowsWideOK; it reports whether it ran. The columns must be checked.
func scatterRowsWide(out []float32, cols []int32, vals []float32, ptr []int, g []float32, ld, c0, n, lo, hi int) bool {
	if !rowsWideOK(ptr, len(g), ld, c0, n, lo, hi) || len(vals) < ptr[hi] || len(cols) < ptr[hi] {
		return false
	}
	if ptr[hi] == ptr[lo] {
		return true
	}
	gp, cp, vp := &g[lo*ld+c0], &cols[0], &vals[0]
	if n == 64 {
		scatterRows64(&out[0], gp, ld, cp, vp, &ptr[lo], hi-lo)
	} else {
		scatterRows32(&out[0], gp, ld, cp, vp, &ptr[lo], hi-lo)
	}
	return true
}

//go:noescape
func gatherRowsMasked(d *float32, ld int, b *float32, n int, cols *int32, vals *float32, ptr *int, rows int)

// gatherRowsNarrowAsm is GatherRowsNarrow's body in one masked AVX-512
// call; it reports whether it ran (AVX-512, 1 ≤ n ≤ 16, d long enough, ptr
// not decreasing). The columns must be checked.
func gatherRowsNarrowAsm(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) bool {
	if !haveAVX512 || n < 1 || n > 16 || c0 < 0 || ld < c0+n || (hi-1)*ld+c0+n > len(d) ||
		len(vals) < ptr[hi] || len(cols) < ptr[hi] || ptr[hi] == ptr[lo] {
		return false
	}
	for t := lo; t < hi; t++ {
		if ptr[t+1] < ptr[t] {
			return false
		}
	}
	gatherRowsMasked(&d[lo*ld+c0], ld, &b[0], n, &cols[0], &vals[0], &ptr[lo], hi-lo)
	return true
}
