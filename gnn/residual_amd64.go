//go:build amd64 && !purego

package gnn

//go:noescape
func residualReLU(u, out, e, bias, hs, hd *float32, src, dst *int32, rows, n int)

// residualReLUWide runs ResidualReLURows in AVX-512 when n is a multiple
// of 16 and reports whether it did.
func residualReLUWide(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool {
	if !haveAVX512 || n%16 != 0 {
		return false
	}
	checkRows("residual relu rows", src, len(hs)/n)
	checkRows("residual relu rows", dst, len(hd)/n)
	residualReLU(&u[0], &out[0], &e[0], &bias[0], &hs[0], &hd[0], &src[0], &dst[0], len(src), n)
	return true
}
