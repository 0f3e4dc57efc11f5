//go:build !amd64 || purego

package gnn

// Without the assembly kernels every column goes through the Go loops of
// kernel.go.

const haveFMA = false

func gatherSparseWide(d []float32, cols []int32, vals []float32, b []float32, n int) int { return 0 }
func gatherDenseWide(d []float32, a []float32, b []float32, n int) int                   { return 0 }
func scatterSparseWide(out []float32, cols []int32, vals []float32, brow []float32, n int) int {
	return 0
}
func scatterDenseWide(out []float32, a []float32, brow []float32, n int) int { return 0 }
func scatterDense2Wide(out, a0, a1, b0, b1 []float32, n int) int             { return 0 }
