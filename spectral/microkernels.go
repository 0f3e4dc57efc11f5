package spectral

import "math"

// The innermost loops. Go does not vectorize, so the gain comes from
// register blocking: dot2x4 loads 6 values per 8 multiply-adds and keeps
// its 8 sums in registers, axpy4x2 loads 4 basis values and updates 2
// outputs per 8 multiply-adds. On the 2-core development machine they run
// at about 10 GFlop/s together, three times gonum's Dgemm on these shapes.
// simd_amd64.s has AVX2/FMA versions of the two hottest, dot2x4 and
// axpy4x2, used when the CPU has them (see simd_amd64.go); these are the
// reference and the fallback.

// dot2x4Go returns the 8 dot products of v0 and v1 with w0..w3 (all of the
// same length), ordered v0·w0, v0·w1, v0·w2, v0·w3, v1·w0, ….
func dot2x4Go(v0, v1, w0, w1, w2, w3 []float64) [8]float64 {
	n := len(v0)
	v1, w0, w1, w2, w3 = v1[:n], w0[:n], w1[:n], w2[:n], w3[:n]
	var a00, a01, a02, a03, a10, a11, a12, a13 float64
	for t, x0 := range v0 {
		x1 := v1[t]
		y0, y1, y2, y3 := w0[t], w1[t], w2[t], w3[t]
		a00 += x0 * y0
		a01 += x0 * y1
		a02 += x0 * y2
		a03 += x0 * y3
		a10 += x1 * y0
		a11 += x1 * y1
		a12 += x1 * y2
		a13 += x1 * y3
	}
	return [8]float64{a00, a01, a02, a03, a10, a11, a12, a13}
}

// dot returns x·y with four partial sums, which both shortens the
// dependency chain and fixes the summation order.
func dot(x, y []float64) float64 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+3 < n; t += 4 {
		s0 += x[t] * y[t]
		s1 += x[t+1] * y[t+1]
		s2 += x[t+2] * y[t+2]
		s3 += x[t+3] * y[t+3]
	}
	for ; t < n; t++ {
		s0 += x[t] * y[t]
	}
	return (s0 + s1) + (s2 + s3)
}

// norm returns ‖x‖₂. The plain sum of squares is exact enough unless it
// under- or overflows; only then is the vector rescaled by its largest
// entry.
func norm(x []float64) float64 {
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+3 < len(x); t += 4 {
		s0 += x[t] * x[t]
		s1 += x[t+1] * x[t+1]
		s2 += x[t+2] * x[t+2]
		s3 += x[t+3] * x[t+3]
	}
	for ; t < len(x); t++ {
		s0 += x[t] * x[t]
	}
	sum := (s0 + s1) + (s2 + s3)
	if sum > 1e-280 && sum < 1e280 {
		return math.Sqrt(sum)
	}
	var scale float64
	for _, v := range x {
		scale = max(scale, math.Abs(v))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return scale
	}
	inv := 1 / scale
	sum = 0
	for _, v := range x {
		sum += (v * inv) * (v * inv)
	}
	return scale * math.Sqrt(sum)
}

// axpy sets y += a·x.
func axpy(y []float64, a float64, x []float64) {
	x = x[:len(y)]
	for t := range y {
		y[t] += a * x[t]
	}
}

// scal sets x *= a.
func scal(x []float64, a float64) {
	for t := range x {
		x[t] *= a
	}
}

// axpy4x2Go sets o0 += h[0]x0 + h[2]x1 + h[4]x2 + h[6]x3 and
// o1 += h[1]x0 + h[3]x1 + h[5]x2 + h[7]x3.
func axpy4x2Go(o0, o1 []float64, h *[8]float64, x0, x1, x2, x3 []float64) {
	n := len(o0)
	o1, x0, x1, x2, x3 = o1[:n], x0[:n], x1[:n], x2[:n], x3[:n]
	h00, h01, h10, h11 := h[0], h[1], h[2], h[3]
	h20, h21, h30, h31 := h[4], h[5], h[6], h[7]
	for t := range o0 {
		a, b, c, d := x0[t], x1[t], x2[t], x3[t]
		o0[t] += h00*a + h10*b + h20*c + h30*d
		o1[t] += h01*a + h11*b + h21*c + h31*d
	}
}

// axpy4x1 sets o += h0x0 + h1x1 + h2x2 + h3x3.
func axpy4x1(o []float64, h0, h1, h2, h3 float64, x0, x1, x2, x3 []float64) {
	n := len(o)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for t := range o {
		o[t] += h0*x0[t] + h1*x1[t] + h2*x2[t] + h3*x3[t]
	}
}
