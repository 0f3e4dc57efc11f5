//go:build amd64 && !purego

package gnn

//go:noescape
func gatherRows32(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func gatherRows64(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func scatterRows32(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)

//go:noescape
func scatterRows64(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)

// rowsWideOK reports whether the whole-block kernels of rows_amd64.s can
// run rows [lo, hi) of a block of n columns whose strided side (d or g,
// stride ld, columns from c0) has length strided: AVX-512, n 32 or 64, the
// strided side long enough, ptr not decreasing (so every term lies in
// [ptr[lo], ptr[hi]], whose columns the caller checked). Otherwise the
// caller runs its rows one call each.
func rowsWideOK(ptr []int, strided, ld, c0, n, lo, hi int) bool {
	if !haveAVX512 || (n != 32 && n != 64) || c0 < 0 || ld < c0+n || (hi-1)*ld+c0+n > strided {
		return false
	}
	for t := lo; t < hi; t++ {
		if ptr[t+1] < ptr[t] {
			return false
		}
	}
	return true
}

// gatherRowsWide is GatherSparseRows' body in one assembly call when
// rowsWideOK; it reports whether it ran. The columns must be checked.
func gatherRowsWide(d []float32, ld, c0 int, ptr []int, cols []int32, vals []float32, b []float32, n, lo, hi int) bool {
	if !rowsWideOK(ptr, len(d), ld, c0, n, lo, hi) || len(vals) < ptr[hi] || len(cols) < ptr[hi] {
		return false
	}
	if ptr[hi] == ptr[lo] { // no terms: rows of zeros, and cols may be empty
		for t := lo; t < hi; t++ {
			clear(d[t*ld+c0 : t*ld+c0+n])
		}
		return true
	}
	dp, cp, vp := &d[lo*ld+c0], &cols[0], &vals[0]
	if n == 64 {
		gatherRows64(dp, ld, &b[0], cp, vp, &ptr[lo], hi-lo)
	} else {
		gatherRows32(dp, ld, &b[0], cp, vp, &ptr[lo], hi-lo)
	}
	return true
}

// scatterRowsWide is ScatterSparseRows' body in one assembly call when
// rowsWideOK; it reports whether it ran. The columns must be checked.
func scatterRowsWide(out []float32, cols []int32, vals []float32, ptr []int, g []float32, ld, c0, n, lo, hi int) bool {
	if !rowsWideOK(ptr, len(g), ld, c0, n, lo, hi) || len(vals) < ptr[hi] || len(cols) < ptr[hi] {
		return false
	}
	if ptr[hi] == ptr[lo] {
		return true
	}
	gp, cp, vp := &g[lo*ld+c0], &cols[0], &vals[0]
	if n == 64 {
		scatterRows64(&out[0], gp, ld, cp, vp, &ptr[lo], hi-lo)
	} else {
		scatterRows32(&out[0], gp, ld, cp, vp, &ptr[lo], hi-lo)
	}
	return true
}
