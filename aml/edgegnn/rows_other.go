//go:build !amd64 || purego

package edgegnn

func reluRows(d, x []float32) int { return 0 }

func axpyRows(d []float32, alpha float32, s []float32) int { return 0 }

func residualRows(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool { return false }

func gatherRows(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int, bias []float32) bool {
	return false
}
