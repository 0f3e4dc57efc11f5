//go:build amd64 && !purego

package edgegnn

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

//go:noescape
func reluAVX2(d, x *float32, n int)

//go:noescape
func residualReLUAVX2(u, out, e, bias, hs, hd *float32, src, dst *int32, rows, n int)

//go:noescape
func gatherRowsAVX2(d *float32, ld int, b *float32, n int, cols *int32, vals *float32, ptr *int, rows int, bias *float32)

//go:noescape
func axpyAVX2(d, s *float32, alpha float32, n int)

// edgeRowsApply reports whether the AVX2 row passes run: AVX2 without
// AVX-512, where package gnn runs its own assembly.
func edgeRowsApply() bool { return cpu.X86.HasAVX2 && !cpu.X86.HasAVX512F }

// reluRows computes the leading multiple of 8 of ReLU(x) into d and
// returns its length.
func reluRows(d, x []float32) int {
	n := len(d) &^ 7
	if n == 0 || !edgeRowsApply() {
		return 0
	}
	_ = x[n-1]
	reluAVX2(&d[0], &x[0], n)
	return n
}

// axpyRows computes the leading multiple of 8 of d += alpha·s and returns
// its length.
func axpyRows(d []float32, alpha float32, s []float32) int {
	n := len(d) &^ 7
	if n == 0 || !edgeRowsApply() {
		return 0
	}
	_ = s[n-1]
	axpyAVX2(&d[0], &s[0], alpha, n)
	return n
}

// residualRows runs ResidualReLURows' rows in AVX2 when n is a multiple of
// 8 and reports whether it did; the caller checked the lengths of u, out,
// e and bias.
func residualRows(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool {
	if n == 0 || n%8 != 0 || len(src) == 0 || !edgeRowsApply() {
		return false
	}
	ns, nd := len(hs)/n, len(hd)/n
	for k := range src {
		if uint(int(src[k])) >= uint(ns) || uint(int(dst[k])) >= uint(nd) {
			panic(fmt.Sprintf("edgegnn: residual relu rows: rows %d and %d outside [0,%d) and [0,%d)", src[k], dst[k], ns, nd))
		}
	}
	residualReLUAVX2(&u[0], &out[0], &e[0], &bias[0], &hs[0], &hd[0], &src[0], &dst[0], len(src), n)
	return true
}

// gatherRows runs gnn.GatherSparseRows' rows [lo, hi) (bias nil) or
// GatherSlotsBias' (ptr i·K, ld n, c0 0) in AVX2 when n is a multiple of
// 32 and reports whether it did. It checks every index the assembly
// trusts.
func gatherRows(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int, bias []float32) bool {
	if lo >= hi || n == 0 || n%32 != 0 || !edgeRowsApply() || !cpu.X86.HasFMA { // gnn's FMA kernel's sums
		return false
	}
	if c0 < 0 || ld < c0+n || len(d) < (hi-1)*ld+c0+n || len(ptr) <= hi || (bias != nil && len(bias) < n) {
		panic(fmt.Sprintf("edgegnn: gather rows: %d values, rows [%d,%d) of %d at column %d of %d, %d row starts, bias %d",
			len(d), lo, hi, n, c0, ld, len(ptr), len(bias)))
	}
	for t := lo; t < hi; t++ {
		if ptr[t+1] < ptr[t] {
			panic(fmt.Sprintf("edgegnn: gather rows: row starts %d > %d", ptr[t], ptr[t+1]))
		}
	}
	k0, k1 := ptr[lo], ptr[hi]
	if k0 < 0 || k1 > len(cols) || k1 > len(vals) {
		panic(fmt.Sprintf("edgegnn: gather rows: terms [%d,%d) of %d columns and %d values", k0, k1, len(cols), len(vals)))
	}
	rows := len(b) / n
	for _, c := range cols[k0:k1] {
		if uint(int(c)) >= uint(rows) {
			panic(fmt.Sprintf("edgegnn: gather rows: row %d outside [0,%d)", c, rows))
		}
	}
	var bp *float32
	if bias != nil {
		bp = &bias[0]
	}
	var cp *int32
	var vp *float32
	if k1 > 0 {
		cp, vp = &cols[0], &vals[0]
	}
	var bb *float32
	if len(b) > 0 {
		bb = &b[0]
	}
	gatherRowsAVX2(&d[lo*ld+c0], ld, bb, n, cp, vp, &ptr[lo], hi-lo, bp)
	return true
}
