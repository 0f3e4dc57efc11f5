package gnn

// Inner kernels shared by the dense and sparse products. On amd64 with
// AVX and FMA the leading multiples of 32 columns run in assembly
// (kernel_amd64.s); the rest, and everything elsewhere, runs here. Go does
// not vectorise, so these loops keep up to eight output columns in scalar
// locals (registers) while they sweep the reduction, and reach eight input
// values at a time through array pointers, which costs one bounds check per
// input row instead of one per element. The sparse and dense variants are
// written out separately because this is the hottest code in training.

// GatherSparse sets d (len n) = Σ_k vals[k]·b[cols[k]*n : cols[k]*n+n],
// where b is row-major with n columns and len(vals) ≥ len(cols).
func GatherSparse(d []float32, cols []int32, vals []float32, b []float32, n int) {
	gatherSparseFrom(gatherSparseWide(d, cols, vals, b, n), d, cols, vals, b, n)
}

// gatherSparseFrom is GatherSparse for columns [j, n) in Go.
func gatherSparseFrom(j int, d []float32, cols []int32, vals []float32, b []float32, n int) {
	vals = vals[:len(cols)]
	for ; j+8 <= n; j += 8 {
		var c0, c1, c2, c3, c4, c5, c6, c7 float32
		for k, c := range cols {
			v := vals[k]
			x := (*[8]float32)(b[int(c)*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
			c3 += v * x[3]
			c4 += v * x[4]
			c5 += v * x[5]
			c6 += v * x[6]
			c7 += v * x[7]
		}
		dd := (*[8]float32)(d[j:])
		dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6], dd[7] = c0, c1, c2, c3, c4, c5, c6, c7
	}
	if j+4 <= n {
		var c0, c1, c2, c3 float32
		for k, c := range cols {
			v := vals[k]
			x := (*[4]float32)(b[int(c)*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
			c3 += v * x[3]
		}
		dd := (*[4]float32)(d[j:])
		dd[0], dd[1], dd[2], dd[3] = c0, c1, c2, c3
		j += 4
	}
	switch n - j {
	case 3:
		var c0, c1, c2 float32
		for k, c := range cols {
			v := vals[k]
			x := (*[3]float32)(b[int(c)*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
		}
		d[j], d[j+1], d[j+2] = c0, c1, c2
	case 2:
		var c0, c1 float32
		for k, c := range cols {
			v := vals[k]
			x := (*[2]float32)(b[int(c)*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
		}
		d[j], d[j+1] = c0, c1
	case 1:
		var c0 float32
		for k, c := range cols {
			c0 += vals[k] * b[int(c)*n+j]
		}
		d[j] = c0
	}
}

// gatherDense sets d (len n) = Σ_p a[p]·b[p*n : p*n+n]: a row vector
// times a row-major len(a)×n matrix b.
func gatherDense(d []float32, a []float32, b []float32, n int) {
	gatherDenseFrom(gatherDenseWide(d, a, b, n), d, a, b, n)
}

// gatherDenseFrom is gatherDense for columns [j, n) in Go.
func gatherDenseFrom(j int, d []float32, a []float32, b []float32, n int) {
	for ; j+8 <= n; j += 8 {
		var c0, c1, c2, c3, c4, c5, c6, c7 float32
		for p, v := range a {
			x := (*[8]float32)(b[p*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
			c3 += v * x[3]
			c4 += v * x[4]
			c5 += v * x[5]
			c6 += v * x[6]
			c7 += v * x[7]
		}
		dd := (*[8]float32)(d[j:])
		dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6], dd[7] = c0, c1, c2, c3, c4, c5, c6, c7
	}
	if j+4 <= n {
		var c0, c1, c2, c3 float32
		for p, v := range a {
			x := (*[4]float32)(b[p*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
			c3 += v * x[3]
		}
		dd := (*[4]float32)(d[j:])
		dd[0], dd[1], dd[2], dd[3] = c0, c1, c2, c3
		j += 4
	}
	switch n - j {
	case 3:
		var c0, c1, c2 float32
		for p, v := range a {
			x := (*[3]float32)(b[p*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
			c2 += v * x[2]
		}
		d[j], d[j+1], d[j+2] = c0, c1, c2
	case 2:
		var c0, c1 float32
		for p, v := range a {
			x := (*[2]float32)(b[p*n+j:])
			c0 += v * x[0]
			c1 += v * x[1]
		}
		d[j], d[j+1] = c0, c1
	case 1:
		var c0 float32
		for p, v := range a {
			c0 += v * b[p*n+j]
		}
		d[j] = c0
	}
}

// colSums sets d (len n) = Σ_i b[i*n : i*n+n], the column sums of the
// row-major m×n matrix b.
func colSums(d []float32, b []float32, n int) {
	m := len(b) / n
	j := colSumsWide(d, b, n)
	for ; j+8 <= n; j += 8 {
		var c0, c1, c2, c3, c4, c5, c6, c7 float32
		for i := 0; i < m; i++ {
			x := (*[8]float32)(b[i*n+j:])
			c0 += x[0]
			c1 += x[1]
			c2 += x[2]
			c3 += x[3]
			c4 += x[4]
			c5 += x[5]
			c6 += x[6]
			c7 += x[7]
		}
		dd := (*[8]float32)(d[j:])
		dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6], dd[7] = c0, c1, c2, c3, c4, c5, c6, c7
	}
	for ; j < n; j++ {
		var c0 float32
		for i := 0; i < m; i++ {
			c0 += b[i*n+j]
		}
		d[j] = c0
	}
}

// ScatterSparse adds vals[k]·brow into row cols[k] of out (row-major, n
// columns) for every k: one row of b scattered by one row of a sparse
// matrix. brow is held in registers while the entries stream past.
func ScatterSparse(out []float32, cols []int32, vals []float32, brow []float32, n int) {
	scatterSparseFrom(scatterSparseWide(out, cols, vals, brow, n), out, cols, vals, brow, n)
}

// scatterSparseFrom is ScatterSparse for columns [j, n) in Go.
func scatterSparseFrom(j int, out []float32, cols []int32, vals []float32, brow []float32, n int) {
	vals = vals[:len(cols)]
	brow = brow[:n]
	for ; j+8 <= n; j += 8 {
		bb := (*[8]float32)(brow[j:])
		b0, b1, b2, b3, b4, b5, b6, b7 := bb[0], bb[1], bb[2], bb[3], bb[4], bb[5], bb[6], bb[7]
		for k, c := range cols {
			v := vals[k]
			d := (*[8]float32)(out[int(c)*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
			d[3] += v * b3
			d[4] += v * b4
			d[5] += v * b5
			d[6] += v * b6
			d[7] += v * b7
		}
	}
	if j+4 <= n {
		bb := (*[4]float32)(brow[j:])
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		for k, c := range cols {
			v := vals[k]
			d := (*[4]float32)(out[int(c)*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
			d[3] += v * b3
		}
		j += 4
	}
	switch n - j {
	case 3:
		b0, b1, b2 := brow[j], brow[j+1], brow[j+2]
		for k, c := range cols {
			v := vals[k]
			d := (*[3]float32)(out[int(c)*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
		}
	case 2:
		b0, b1 := brow[j], brow[j+1]
		for k, c := range cols {
			v := vals[k]
			d := (*[2]float32)(out[int(c)*n+j:])
			d[0] += v * b0
			d[1] += v * b1
		}
	case 1:
		b0 := brow[j]
		for k, c := range cols {
			out[int(c)*n+j] += vals[k] * b0
		}
	}
}

// scatterDense2 is scatterDense(out, a0, b0, n) followed by
// scatterDense(out, a1, b1, n) (len(a1) = len(a0)), with the same
// arithmetic per element, in one pass over out where the assembly runs.
func scatterDense2(out, a0, a1, b0, b1 []float32, n int) {
	j := scatterDense2Wide(out, a0, a1, b0, b1, n)
	scatterDenseFrom(j, out, a0, b0, n)
	scatterDenseFrom(j, out, a1, b1, n)
}

// scatterDense adds the outer product aᵀ·brow into out (len(a)×n,
// row-major): out[p*n : p*n+n] += a[p]·brow, a rank-one update.
func scatterDense(out []float32, a []float32, brow []float32, n int) {
	scatterDenseFrom(scatterDenseWide(out, a, brow, n), out, a, brow, n)
}

// scatterDenseFrom is scatterDense for columns [j, n) in Go.
func scatterDenseFrom(j int, out []float32, a []float32, brow []float32, n int) {
	brow = brow[:n]
	for ; j+8 <= n; j += 8 {
		bb := (*[8]float32)(brow[j:])
		b0, b1, b2, b3, b4, b5, b6, b7 := bb[0], bb[1], bb[2], bb[3], bb[4], bb[5], bb[6], bb[7]
		for p, v := range a {
			d := (*[8]float32)(out[p*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
			d[3] += v * b3
			d[4] += v * b4
			d[5] += v * b5
			d[6] += v * b6
			d[7] += v * b7
		}
	}
	if j+4 <= n {
		bb := (*[4]float32)(brow[j:])
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		for p, v := range a {
			d := (*[4]float32)(out[p*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
			d[3] += v * b3
		}
		j += 4
	}
	switch n - j {
	case 3:
		b0, b1, b2 := brow[j], brow[j+1], brow[j+2]
		for p, v := range a {
			d := (*[3]float32)(out[p*n+j:])
			d[0] += v * b0
			d[1] += v * b1
			d[2] += v * b2
		}
	case 2:
		b0, b1 := brow[j], brow[j+1]
		for p, v := range a {
			d := (*[2]float32)(out[p*n+j:])
			d[0] += v * b0
			d[1] += v * b1
		}
	case 1:
		b0 := brow[j]
		for p, v := range a {
			out[p*n+j] += v * b0
		}
	}
}
