//go:build !amd64 || purego

package gnn

// Without the AVX-512 assembly (gemm_amd64.s, vec_amd64.s, slots_amd64.s,
// residual_amd64.s) every product and pass runs its Go loop throughout:
// each wide entry point covers nothing.

const haveAVX512 = false

func gemmTiles(d []float32, ldd int, a []float32, sar, saq int, b []float32, ldb, rows, k, n int, acc bool, bias []float32) (int, int) {
	return 0, 0
}

func addWide(d, a, b []float32) int                        { return 0 }
func axpyWide(d []float32, alpha float32, s []float32) int { return 0 }
func reluWide(d, x []float32) int                          { return 0 }
func reluBackwardWide(d, g, out []float32) int             { return 0 }
func addBiasWide(t, b []float32, n int) bool               { return false }
func colSumsWide(d, b []float32, n int) int                { return 0 }

func gatherSlotsWide(d []float32, cols []int32, vals []float32, k int, w []float32, n int, bias []float32) int {
	return 0
}

func residualReLUWide(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool {
	return false
}

func gatherSparseWideChecked(d []float32, cols []int32, vals []float32, b []float32, n int) int {
	return 0
}

func scatterSparseWideChecked(out []float32, cols []int32, vals []float32, brow []float32, n int) int {
	return 0
}

func gatherRowsWide(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) bool {
	return false
}
func scatterRowsWide(out []float32, cols []int32, vals []float32, ptr []int, g []float32, ld, c0, n, lo, hi int) bool {
	return false
}

func gatherRowsNarrowAsm(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) bool {
	return false
}
