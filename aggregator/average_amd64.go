package aggregator

import "golang.org/x/sys/cpu"

// The average's inner loops in AVX2 (average_amd64.s): four lanes of the
// same multiply, add, divide and conversion the Go loops do, so the
// result is the same bits with or without them.

//go:noescape
func accumulateAVX(acc *float64, x *float32, w float64, n int)

//go:noescape
func finishAVX(out *float32, acc *float64, total float64, n int)

// accumulate adds w·x to acc (of the same length).
func accumulate(acc []float64, x []float32, w float64) {
	n := 0
	if cpu.X86.HasAVX2 {
		n = len(acc) &^ 7
		if n > 0 {
			accumulateAVX(&acc[0], &x[0], w, n)
		}
	}
	accumulateGo(acc[n:], x[n:len(acc)], w)
}

// finish writes acc / total into out (of the same length).
func finish(out []float32, acc []float64, total float64) {
	n := 0
	if cpu.X86.HasAVX2 {
		n = len(acc) &^ 3
		if n > 0 {
			finishAVX(&out[0], &acc[0], total, n)
		}
	}
	finishGo(out[n:len(acc)], acc[n:], total)
}
