//go:build amd64 && !purego

package gnn

// The element-wise passes of the layers (bias, sums, ReLU and its
// backward, column sums) hand their leading multiple of 16 elements to
// the AVX-512 loops of vec_amd64.s: in the edge model's steps these
// passes over activations and gradients, one element per scalar
// instruction in Go, cost about as much as the products themselves. The
// wrappers check the lengths the assembly trusts and return how many
// elements (or columns) they covered; the callers finish the rest in Go.

//go:noescape
func addVec(d, a, b *float32, n int)

//go:noescape
func axpyVec(d, s *float32, alpha float32, n int)

//go:noescape
func reluVec(d, x *float32, n int)

//go:noescape
func reluBackVec(d, gr, out *float32, n int)

//go:noescape
func addBiasRows(d, b *float32, rows, n int)

//go:noescape
func colSums64(d, b *float32, rows, stride int)

//go:noescape
func colSums32(d, b *float32, rows, stride int)

//go:noescape
func gatherSparse512(d, b *float32, cols *int32, vals *float32, nk, stride, blocks int)

//go:noescape
func scatterSparse512(out, brow *float32, cols *int32, vals *float32, nk, stride, blocks int)

// addWide sets d[i] = a[i] + b[i] for the leading multiple of 16 of
// len(d) and returns that count.
func addWide(d, a, b []float32) int {
	n := len(d) &^ 15
	if !haveAVX512 || n == 0 {
		return 0
	}
	checkLen("add", len(a), n)
	checkLen("add", len(b), n)
	addVec(&d[0], &a[0], &b[0], n)
	return n
}

// axpyWide sets d[i] += alpha·s[i] (product rounded, then the sum) for
// the leading multiple of 16 of len(d) and returns that count.
func axpyWide(d []float32, alpha float32, s []float32) int {
	n := len(d) &^ 15
	if !haveAVX512 || n == 0 {
		return 0
	}
	checkLen("add scaled", len(s), n)
	axpyVec(&d[0], &s[0], alpha, n)
	return n
}

// reluWide is ReLU's loop over the leading multiple of 16 of len(d).
func reluWide(d, x []float32) int {
	n := len(d) &^ 15
	if !haveAVX512 || n == 0 {
		return 0
	}
	checkLen("relu", len(x), n)
	reluVec(&d[0], &x[0], n)
	return n
}

// reluBackwardWide is ReLUBackward's loop over the leading multiple of 16
// of len(d).
func reluBackwardWide(d, g, out []float32) int {
	n := len(d) &^ 15
	if !haveAVX512 || n == 0 {
		return 0
	}
	checkLen("relu backward", len(g), n)
	checkLen("relu backward", len(out), n)
	reluBackVec(&d[0], &g[0], &out[0], n)
	return n
}

// addBiasWide adds b (len n, a multiple of 16) to every row of t (row
// stride n) and reports whether it did.
func addBiasWide(t, b []float32, n int) bool {
	if !haveAVX512 || n == 0 || n%16 != 0 || len(t) == 0 {
		return false
	}
	checkLen("add bias", len(b), n)
	addBiasRows(&t[0], &b[0], len(t)/n, n)
	return true
}

// colSumsWide computes colSums' columns [0, w) for the leading multiple
// w of 32 columns, chunk by chunk of 64 (then 32), summing every column
// over the rows in order as colSums does, and returns w.
func colSumsWide(d, b []float32, n int) int {
	w := n &^ 31
	rows := 0
	if n > 0 {
		rows = len(b) / n
	}
	if !haveAVX512 || w == 0 || rows == 0 {
		return 0
	}
	checkLen("col sums", len(d), w)
	checkLen("col sums", len(b), (rows-1)*n+w)
	j := 0
	for ; j+64 <= w; j += 64 {
		colSums64(&d[j], &b[j], rows, n)
	}
	if j < w {
		colSums32(&d[j], &b[j], rows, n)
	}
	return w
}

// gatherSparse512Wide computes GatherSparse's leading multiple of 64
// columns in ZMM registers (a 64-column row in one pass, where the YMM
// kernel makes two) and returns their number.
func gatherSparse512Wide(d []float32, cols []int32, vals []float32, b []float32, n int) int {
	w := n &^ 63
	if !haveAVX512 || w == 0 || len(cols) == 0 {
		return 0
	}
	checkLen("gather sparse", len(d), n)
	checkLen("gather sparse", len(vals), len(cols))
	checkRows("gather sparse", cols, len(b)/n)
	gatherSparse512(&d[0], &b[0], &cols[0], &vals[0], len(cols), n, w/64)
	return w
}

// scatterSparse512Wide is gatherSparse512Wide for ScatterSparse.
func scatterSparse512Wide(out []float32, cols []int32, vals []float32, brow []float32, n int) int {
	w := n &^ 63
	if !haveAVX512 || w == 0 || len(cols) == 0 {
		return 0
	}
	checkLen("scatter sparse", len(brow), n)
	checkLen("scatter sparse", len(vals), len(cols))
	checkRows("scatter sparse", cols, len(out)/n)
	scatterSparse512(&out[0], &brow[0], &cols[0], &vals[0], len(cols), n, w/64)
	return w
}
