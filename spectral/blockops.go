package spectral

// Dense kernels on blocks of vectors stored vector-major: vector j of a
// block v with vector length n is v[j*n:(j+1)*n]. They are the Lanczos
// basis operations: G = Vᵀ·W (gram), W −= V·G (subMul) and the thick
// restart V ← V·Y (mulInPlace). All three stream V once per call and keep
// a tile of W (or of the result) in cache, so they run near memory
// bandwidth rather than one vector at a time; see microkernels.go.

// chunkLen is the tile length along the vectors: a tile of 8 vectors is
// 128 KiB, which stays in L2 while all basis vectors stream past it.
const chunkLen = 2048

// gram sets g[j*ldg+c] = v_j·w_c for j < m, c < k (v is m×n, w is k×n,
// both vector-major). Basis vectors are split between goroutines, so every
// entry is summed by one goroutine in a fixed order.
func gram(g []float64, ldg int, v []float64, m int, w []float64, k, n int) {
	if len(v) < m*n || len(w) < k*n || (m > 0 && len(g) < (m-1)*ldg+k) {
		panic("spectral: gram: shape")
	}
	for j := 0; j < m; j++ {
		clear(g[j*ldg : j*ldg+k])
	}
	// Rows of g in pieces of gramRows: each entry is summed by one
	// goroutine, in a fixed order.
	forChunks(m, gramRows, workersFor(m/2, m*k*n), func(_, lo, hi int) {
		for t0 := 0; t0 < n; t0 += chunkLen {
			gramTile(g, ldg, v, lo, hi, w, k, n, t0, min(t0+chunkLen, n))
		}
	})
}

// gramRows is the number of basis vectors a gram piece takes: even, for
// the two-row kernel, and small enough to balance two goroutines.
const gramRows = 16

// gramTile adds the contributions of positions [t0, t1) to rows [lo, hi)
// of g.
func gramTile(g []float64, ldg int, v []float64, lo, hi int, w []float64, k, n, t0, t1 int) {
	j := lo
	for ; j+1 < hi; j += 2 {
		v0 := v[j*n+t0 : j*n+t1]
		v1 := v[(j+1)*n+t0 : (j+1)*n+t1]
		c := 0
		for ; c+3 < k; c += 4 {
			a := dot2x4(v0, v1, w[c*n+t0:c*n+t1], w[(c+1)*n+t0:(c+1)*n+t1],
				w[(c+2)*n+t0:(c+2)*n+t1], w[(c+3)*n+t0:(c+3)*n+t1])
			g0, g1 := g[j*ldg+c:j*ldg+c+4], g[(j+1)*ldg+c:(j+1)*ldg+c+4]
			g0[0] += a[0]
			g0[1] += a[1]
			g0[2] += a[2]
			g0[3] += a[3]
			g1[0] += a[4]
			g1[1] += a[5]
			g1[2] += a[6]
			g1[3] += a[7]
		}
		for ; c < k; c++ {
			wc := w[c*n+t0 : c*n+t1]
			g[j*ldg+c] += dot(v0, wc)
			g[(j+1)*ldg+c] += dot(v1, wc)
		}
	}
	if j < hi {
		v0 := v[j*n+t0 : j*n+t1]
		for c := 0; c < k; c++ {
			g[j*ldg+c] += dot(v0, w[c*n+t0:c*n+t1])
		}
	}
}

// subMul sets w_c −= Σ_j g[j*ldg+c]·v_j for c < k (w is k×n, v is m×n).
// Positions are split between goroutines.
func subMul(w []float64, k int, v []float64, m int, g []float64, ldg int, n int) {
	if len(v) < m*n || len(w) < k*n || (m > 0 && len(g) < (m-1)*ldg+k) {
		panic("spectral: submul: shape")
	}
	if m == 0 || k == 0 {
		return
	}
	forChunks(n, chunkLen, workersFor(n/chunkLen+1, m*k*n), func(_, t0, t1 int) {
		combineTile(w, n, t0, k, v, m, g, ldg, -1, n, t0, t1)
	})
}

// mulInPlace sets v_c = Σ_{j<m} y[j*ldy+c]·v_j for c < k ≤ m, overwriting
// the first k vectors of v (m×n) with the combinations of all m. Each
// goroutine computes a tile of the result into its own buffer before
// writing it back, which is what makes the update safe in place.
func mulInPlace(v []float64, m int, y []float64, ldy, k, n int) {
	if k > m || len(v) < m*n || (m > 0 && len(y) < (m-1)*ldy+k) {
		panic("spectral: mulinplace: shape")
	}
	if k == 0 {
		return
	}
	// The k output tiles stay in cache while the basis streams past:
	// about 256 KiB of them.
	tileLen := max(64, min(chunkLen, (32768/k)&^63))
	chunks := (n + tileLen - 1) / tileLen
	workers := workersFor(chunks, m*k*n)
	tiles := make([][]float64, workers) // one per goroutine, reused across its chunks
	forChunks(n, tileLen, workers, func(wk, t0, t1 int) {
		if tiles[wk] == nil {
			tiles[wk] = make([]float64, k*tileLen)
		}
		tile := tiles[wk]
		ld := t1 - t0
		clear(tile[:k*ld])
		combineTile(tile, ld, 0, k, v, m, y, ldy, 1, n, t0, t1)
		for c := 0; c < k; c++ {
			copy(v[c*n+t0:c*n+t1], tile[c*ld:(c+1)*ld])
		}
	})
}

// combineTile adds sign·Σ_j coef[j*ldc+c]·v_j[t0:t1] to out_c, where out_c
// is out[c*ldo+off : c*ldo+off+(t1-t0)]. The basis vectors are the outer
// loop: each tile of four of them is read from memory once and applied to
// all k outputs, which stay in cache (the caller sizes the tile so).
func combineTile(out []float64, ldo, off, k int, v []float64, m int, coef []float64, ldc int, sign float64, n, t0, t1 int) {
	span := t1 - t0
	j := 0
	for ; j+3 < m; j += 4 {
		x0, x1 := v[j*n+t0:j*n+t1], v[(j+1)*n+t0:(j+1)*n+t1]
		x2, x3 := v[(j+2)*n+t0:(j+2)*n+t1], v[(j+3)*n+t0:(j+3)*n+t1]
		c0, c1, c2, c3 := coef[j*ldc:], coef[(j+1)*ldc:], coef[(j+2)*ldc:], coef[(j+3)*ldc:]
		c := 0
		for ; c+1 < k; c += 2 {
			h := [8]float64{sign * c0[c], sign * c0[c+1], sign * c1[c], sign * c1[c+1],
				sign * c2[c], sign * c2[c+1], sign * c3[c], sign * c3[c+1]}
			axpy4x2(out[c*ldo+off:c*ldo+off+span], out[(c+1)*ldo+off:(c+1)*ldo+off+span], &h, x0, x1, x2, x3)
		}
		if c < k {
			axpy4x1(out[c*ldo+off:c*ldo+off+span], sign*c0[c], sign*c1[c], sign*c2[c], sign*c3[c], x0, x1, x2, x3)
		}
	}
	for ; j < m; j++ {
		vj := v[j*n+t0 : j*n+t1]
		for c := 0; c < k; c++ {
			axpy(out[c*ldo+off:c*ldo+off+span], sign*coef[j*ldc+c], vj)
		}
	}
}

// norms2 returns the Euclidean norm of each of the k vectors of w (k×n).
func norms2(w []float64, k, n int) []float64 {
	out := make([]float64, k)
	for c := range out {
		out[c] = norm(w[c*n : (c+1)*n])
	}
	return out
}

// transposeTile is the number of rows a transpose handles at a time, so
// that the strided side of the copy stays in cache.
const transposeTile = 256

// toNodeMajor copies the k vectors of src (k×n vector-major) into dst as an
// n×k node-major block.
func toNodeMajor(dst, src []float64, k, n int) {
	for i0 := 0; i0 < n; i0 += transposeTile {
		i1 := min(i0+transposeTile, n)
		for c := 0; c < k; c++ {
			for i, x := range src[c*n+i0 : c*n+i1] {
				dst[(i0+i)*k+c] = x
			}
		}
	}
}

// toVectorMajor is the inverse of toNodeMajor.
func toVectorMajor(dst, src []float64, k, n int) {
	for i0 := 0; i0 < n; i0 += transposeTile {
		i1 := min(i0+transposeTile, n)
		for c := 0; c < k; c++ {
			d := dst[c*n+i0 : c*n+i1]
			for i := range d {
				d[i] = src[(i0+i)*k+c]
			}
		}
	}
}
