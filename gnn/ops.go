package gnn

import "math"

// AddBias adds the row vector b (1×n) to every row of t (m×n).
func AddBias(t, b *Tensor) {
	n := t.Cols
	if b.Rows != 1 || b.Cols != n {
		ShapePanic("add bias", "bias %dx%d for %dx%d", b.Rows, b.Cols, t.Rows, t.Cols)
	}
	if n == 0 || addBiasWide(t.Data, b.Data, n) {
		return
	}
	if n < 8 {
		for i := 0; i < t.Rows; i++ {
			AddInto(t.Data[i*n:(i+1)*n], b.Data)
		}
		return
	}
	j := 0
	for ; j+8 <= n; j += 8 {
		bb := (*[8]float32)(b.Data[j:])
		b0, b1, b2, b3, b4, b5, b6, b7 := bb[0], bb[1], bb[2], bb[3], bb[4], bb[5], bb[6], bb[7]
		for i := 0; i < t.Rows; i++ {
			x := (*[8]float32)(t.Data[i*n+j:])
			x[0] += b0
			x[1] += b1
			x[2] += b2
			x[3] += b3
			x[4] += b4
			x[5] += b5
			x[6] += b6
			x[7] += b7
		}
	}
	for ; j < n; j++ {
		bj := b.Data[j]
		for i := 0; i < t.Rows; i++ {
			t.Data[i*n+j] += bj
		}
	}
}

// AddBiasGrad accumulates the bias gradient db (1×n) += column sums of dOut
// (m×n).
func AddBiasGrad(db, dOut *Tensor) {
	n := dOut.Cols
	if db.Rows != 1 || db.Cols != n {
		ShapePanic("add bias grad", "bias %dx%d for %dx%d", db.Rows, db.Cols, dOut.Rows, dOut.Cols)
	}
	if n == 0 {
		return
	}
	var buf [64]float32
	sums := buf[:0]
	if n <= len(buf) {
		sums = buf[:n]
	} else {
		sums = make([]float32, n)
	}
	colSums(sums, dOut.Data, n)
	AddInto(db.Data, sums)
}

// ReLU sets dst = max(x, 0) elementwise; dst may alias x. Negative inputs,
// -0 included, become +0.
func ReLU(dst, x *Tensor) {
	mustSameShape("relu", dst, x)
	d := dst.Data[:len(x.Data)]
	for i := reluWide(d, x.Data); i < len(d); i++ {
		v := x.Data[i]
		// Clear every bit when the sign bit is set; branch-free because
		// the sign of pre-activations is unpredictable.
		u := math.Float32bits(v)
		d[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
	}
}

// ReLUBackward sets dx = dOut where the ReLU output out is positive and 0
// elsewhere; dx may alias dOut.
func ReLUBackward(dx, dOut, out *Tensor) {
	mustSameShape("relu backward", dOut, out)
	mustSameShape("relu backward", dx, out)
	g := dOut.Data[:len(out.Data)]
	d := dx.Data[:len(out.Data)]
	for i := reluBackwardWide(d, g, out.Data); i < len(d); i++ {
		d[i] = math.Float32frombits(math.Float32bits(g[i]) & positiveMask(out.Data[i]))
	}
}

// positiveMask is all ones when v > 0 and zero otherwise (NaN included),
// without a branch.
func positiveMask(v float32) uint32 {
	x := int64(int32(math.Float32bits(v)))
	// x > 0 exactly for positive v (and positive-signed NaNs, excluded
	// below); -x then has its sign bit set.
	m := uint32((-x) >> 63)
	if v != v {
		return 0
	}
	return m
}
