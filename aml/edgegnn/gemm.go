package edgegnn

import "graphfed/gnn"

// The edge model's forward products, a·b and a·b + bias, with 32- and
// 64-column outputs. Where package gnn has no AVX-512 tiles (AVX2 and FMA
// only) it computes them a row per call, four or eight sums in flight,
// which waits out the multiply-add latency at 32 columns and pays a call
// and its checks per row: the products were a fifth of the h32 evaluation
// step. edgeTiles (gemm_amd64.s) runs two rows at a time over the whole
// block in one call, each element the same sum in the same order, so the
// results are gnn's bit for bit; elsewhere gnn's kernels run.

// edgeMatMul sets dst = a·b (gnn.MatMul).
func edgeMatMul(dst, a, b *gnn.Tensor) {
	if !edgeTilesApply(a.Cols, b.Cols) {
		gnn.MatMul(dst, a, b)
		return
	}
	edgeProduct(dst, a, b, nil)
}

// edgeMatMulBias sets dst = a·b + bias (gnn.MatMulBias).
func edgeMatMulBias(dst, a, b, bias *gnn.Tensor) {
	if !edgeTilesApply(a.Cols, b.Cols) {
		gnn.MatMulBias(dst, a, b, bias)
		return
	}
	if bias.Rows != 1 || bias.Cols != b.Cols {
		gnn.ShapePanic("edge matmul bias", "bias %dx%d for %d columns", bias.Rows, bias.Cols, b.Cols)
	}
	edgeProduct(dst, a, b, bias.Data)
}

// edgeProduct runs the tiles on every row of dst, split over goroutines
// by rows as gnn's products are.
func edgeProduct(dst, a, b *gnn.Tensor, bias []float32) {
	m, k, n := a.Rows, a.Cols, b.Cols
	if b.Rows != k || dst.Rows != m || dst.Cols != n {
		gnn.ShapePanic("edge matmul", "%dx%d · %dx%d into %dx%d", a.Rows, a.Cols, b.Rows, b.Cols, dst.Rows, dst.Cols)
	}
	if p := gnn.ParallelWorkers(m, m*k*n); p > 1 {
		gnn.ParallelSplit(m, p, func(lo, hi int) { edgeTiles(dst.Data, a.Data, b.Data, bias, k, n, lo, hi) })
		return
	}
	edgeTiles(dst.Data, a.Data, b.Data, bias, k, n, 0, m)
}
