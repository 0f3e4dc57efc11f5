package edgegnn

import (
	"math"

	"graphfed/gnn"
)

// ReLU, GIN's scaled self term and the residual edge update's row pass.
// Where package gnn has no AVX-512 (AVX2 only) they ran element by element
// in Go, an eighth of the h32 evaluation step; here they run eight lanes
// at a time (rows_amd64.s), computing the same bits: ReLU is a bit
// operation, the others the same roundings in the same order. Elsewhere
// gnn's kernels run.

// edgeReLU sets dst = ReLU(x) (gnn.ReLU).
func edgeReLU(dst, x *gnn.Tensor) {
	if dst.Rows != x.Rows || dst.Cols != x.Cols {
		gnn.ShapePanic("edge relu", "%v into %v", x, dst)
	}
	n := len(x.Data)
	d := dst.Data[:n]
	i := reluRows(d, x.Data)
	if i == 0 {
		gnn.ReLU(dst, x)
		return
	}
	for ; i < n; i++ {
		u := math.Float32bits(x.Data[i])
		d[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
	}
}

// edgeResidualReLU is gnn.ResidualReLURows.
func edgeResidualReLU(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) {
	rows := len(src)
	if len(dst) != rows || len(u) < rows*n || len(out) < rows*n || len(e) < rows*n || len(bias) < n ||
		!residualRows(u, out, e, bias, hs, hd, src, dst, n) {
		gnn.ResidualReLURows(u, out, e, bias, hs, hd, src, dst, n)
	}
}

// edgeAddScaled sets dst += alpha·src (gnn.AddScaled).
func edgeAddScaled(dst *gnn.Tensor, alpha float32, src *gnn.Tensor) {
	if dst.Rows != src.Rows || dst.Cols != src.Cols {
		gnn.ShapePanic("edge add scaled", "%v into %v", src, dst)
	}
	d, s := dst.Data, src.Data[:len(dst.Data)]
	i := axpyRows(d, alpha, s)
	if i == 0 {
		gnn.AddScaled(dst, alpha, src)
		return
	}
	for ; i < len(d); i++ {
		d[i] += alpha * s[i]
	}
}
