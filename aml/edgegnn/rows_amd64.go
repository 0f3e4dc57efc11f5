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
