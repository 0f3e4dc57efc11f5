package gnn

// MatMulBias sets dst = a·b + bias, bias 1×n added to every row: what
// MatMul followed by AddBias computes, bit for bit. Where the AVX-512
// tiles run, they add the bias to their finished sums before storing them,
// which saves a pass over dst (in the edge model's steps the bias passes
// over the layers' outputs cost about a twentieth of the step).
func MatMulBias(dst, a, b, bias *Tensor) {
	m, k, n := a.Rows, a.Cols, b.Cols
	if b.Rows != k || dst.Rows != m || dst.Cols != n {
		ShapePanic("matmul bias", "%dx%d · %dx%d into %dx%d", a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	if bias.Rows != 1 || bias.Cols != n {
		ShapePanic("matmul bias", "bias %dx%d for %d columns", bias.Rows, bias.Cols, n)
	}
	if p := ParallelWorkers(m, m*k*n); p > 1 {
		ParallelSplit(m, p, func(lo, hi int) { matMulBiasRows(dst, a, b, bias, lo, hi) })
		return
	}
	matMulBiasRows(dst, a, b, bias, 0, m)
}

// matMulBiasRows computes rows [lo, hi) of dst = a·b + bias.
func matMulBiasRows(dst, a, b, bias *Tensor, lo, hi int) {
	k, n := a.Cols, b.Cols
	if n%32 == 0 {
		r, _ := gemmTiles(dst.Data[lo*n:], n, a.Data[lo*k:], k, 1, b.Data, n, hi-lo, k, n, false, bias.Data)
		lo += r
	}
	matMulRows(dst, a, b, lo, hi)
	for i := lo; i < hi; i++ {
		AddInto(dst.Data[i*n:(i+1)*n], bias.Data)
	}
}
