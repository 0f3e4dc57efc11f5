package spectral

// On amd64 the two hottest kernels of the Lanczos basis operations have
// AVX2/FMA versions (simd_amd64.s): four lanes and fused multiply-adds
// make them four to five times faster than the scalar Go loops, which are
// at the scalar port limit (one multiply-add per cycle). Fused rounding
// makes results differ in the last bits from the Go kernels, so a run is
// bit-for-bit reproducible on CPUs of the same kind, not across ones with
// and without AVX2.

// hasAVX2FMA is set once at package initialization from CPUID and never
// changed.
var hasAVX2FMA = detectAVX2FMA()

// detectAVX2FMA reports whether the CPU has AVX2 and FMA and the OS saves
// the YMM registers (the checks golang.org/x/sys/cpu makes).
func detectAVX2FMA() bool {
	if maxID, _, _, _ := cpuid(0, 0); maxID < 7 {
		return false
	}
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if _, _, ecx, _ := cpuid(1, 0); ecx&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if eax, _ := xgetbv(); eax&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	return ebx&(1<<5) != 0
}

// Implemented in simd_amd64.s.

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// dot2x4AVX returns the dot products of dot2x4Go over the first n entries;
// n must be a multiple of 4.
//
//go:noescape
func dot2x4AVX(v0, v1, w0, w1, w2, w3 *float64, n int, out *[8]float64)

// axpy4x2AVX is axpy4x2Go over the first n entries; n must be a multiple
// of 4.
//
//go:noescape
func axpy4x2AVX(o0, o1 *float64, h *[8]float64, x0, x1, x2, x3 *float64, n int)

// dot2x4 is dot2x4Go, vectorized when the CPU allows.
func dot2x4(v0, v1, w0, w1, w2, w3 []float64) [8]float64 {
	n := len(v0)
	n4 := n &^ 3
	if !hasAVX2FMA || n4 == 0 {
		return dot2x4Go(v0, v1, w0, w1, w2, w3)
	}
	v1, w0, w1, w2, w3 = v1[:n], w0[:n], w1[:n], w2[:n], w3[:n]
	var out [8]float64
	dot2x4AVX(&v0[0], &v1[0], &w0[0], &w1[0], &w2[0], &w3[0], n4, &out)
	if n4 < n {
		tail := dot2x4Go(v0[n4:], v1[n4:], w0[n4:], w1[n4:], w2[n4:], w3[n4:])
		for q := range out {
			out[q] += tail[q]
		}
	}
	return out
}

// axpy4x2 is axpy4x2Go, vectorized when the CPU allows.
func axpy4x2(o0, o1 []float64, h *[8]float64, x0, x1, x2, x3 []float64) {
	n := len(o0)
	n4 := n &^ 3
	if !hasAVX2FMA || n4 == 0 {
		axpy4x2Go(o0, o1, h, x0, x1, x2, x3)
		return
	}
	o1, x0, x1, x2, x3 = o1[:n], x0[:n], x1[:n], x2[:n], x3[:n]
	axpy4x2AVX(&o0[0], &o1[0], h, &x0[0], &x1[0], &x2[0], &x3[0], n4)
	if n4 < n {
		axpy4x2Go(o0[n4:], o1[n4:], h, x0[n4:], x1[n4:], x2[n4:], x3[n4:])
	}
}

// vectorKernels reports whether the AVX2/FMA kernels are in use.
func vectorKernels() bool { return hasAVX2FMA }
