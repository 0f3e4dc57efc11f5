//go:build !amd64

package spectral

// Without amd64 vector kernels the register-blocked Go loops are used.

func dot2x4(v0, v1, w0, w1, w2, w3 []float64) [8]float64 { return dot2x4Go(v0, v1, w0, w1, w2, w3) }

func axpy4x2(o0, o1 []float64, h *[8]float64, x0, x1, x2, x3 []float64) {
	axpy4x2Go(o0, o1, h, x0, x1, x2, x3)
}

// vectorKernels reports whether vector kernels are in use: never here.
func vectorKernels() bool { return false }
