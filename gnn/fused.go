package gnn

import (
	"fmt"
	"math"
)

// Fused row passes of the edge model (aml/edgegnn): a product and its
// bias, a slot-row encoder and its bias, the residual edge update. Each
// computes exactly what the separate passes it replaces compute, element
// by element in the same order, so that results stay bit for bit those
// of the unfused code (the edge model's golden training fingerprints
// hold); where AVX-512 is available the rows run in assembly
// (gemm_amd64.s, slots_amd64.s, residual_amd64.s).

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

// GatherSlots sets row i of d (rows×n, row-major) to Σ_s vals[i·k+s]·
// w[cols[i·k+s]·n : …+n] for s < k: a sparse matrix stored as k (column,
// value) slots per row times a dense matrix w (row-major, n columns).
// Every element is what GatherSparse computes for the row; where AVX-512
// is available, groups of rows run together so that their sums overlap
// (an edge encoder's rows have a dozen slots, and one row at a time waited
// out the multiply-add latency at each). It panics on a column outside w.
func GatherSlots(d []float32, cols []int32, vals []float32, k int, w []float32, n int) {
	GatherSlotsBias(d, cols, vals, k, w, n, nil)
}

// GatherSlotsBias is GatherSlots with bias (len n, nil for none) added to
// every row after its sum, as AddBias would after GatherSlots, bit for
// bit, without a second pass over d.
func GatherSlotsBias(d []float32, cols []int32, vals []float32, k int, w []float32, n int, bias []float32) {
	if k <= 0 || n <= 0 {
		clear(d)
		if bias != nil && n > 0 {
			for i := 0; i+n <= len(d); i += n {
				AddInto(d[i:i+n], bias)
			}
		}
		return
	}
	rows := len(cols) / k
	if len(vals) < rows*k || len(d) < rows*n || (bias != nil && len(bias) < n) {
		ShapePanic("gather slots", "%d slots of %d values for %d rows into %d values, bias %d", len(cols), len(vals), rows, len(d), len(bias))
	}
	done := gatherSlotsWide(d, cols[:rows*k], vals[:rows*k], k, w, n, bias)
	for i := done; i < rows; i++ {
		row := d[i*n : (i+1)*n]
		GatherSparse(row, cols[i*k:(i+1)*k], vals[i*k:(i+1)*k], w, n)
		if bias != nil {
			AddInto(row, bias[:n])
		}
	}
}

// ResidualReLURows is the row pass of a residual edge update: for every
// row k of u (rows×n, row-major, rows = len(src) = len(dst)),
//
//	u[k]   = ((u[k] + bias) + hs[src[k]]) + hd[dst[k]]
//	out[k] = ReLU(u[k]) + e[k]
//
// where hs and hd are row-major with n columns (per-node terms gathered
// per edge) and e and out are rows×n. One pass over the rows replaces a
// bias pass, two gathers, a ReLU pass and a sum pass, each of which read
// and wrote the whole ne×n pre-activation (several megabytes an edge
// update). The arithmetic per element is that of those passes in that
// order. It panics on a row of hs or hd outside them.
func ResidualReLURows(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) {
	rows := len(src)
	if len(dst) != rows || len(u) < rows*n || len(out) < rows*n || len(e) < rows*n || len(bias) < n {
		ShapePanic("residual relu rows", "%d sources, %d destinations, %d, %d and %d values for rows of %d, bias %d",
			len(src), len(dst), len(u), len(out), len(e), n, len(bias))
	}
	if rows == 0 || n == 0 {
		return
	}
	if residualReLUWide(u, out, e, bias, hs, hd, src, dst, n) {
		return
	}
	ns, nd := len(hs)/n, len(hd)/n
	for k := range rows {
		if uint(int(src[k])) >= uint(ns) || uint(int(dst[k])) >= uint(nd) {
			panic(fmt.Sprintf("gnn: residual relu rows: rows %d and %d outside [0,%d) and [0,%d)", src[k], dst[k], ns, nd))
		}
		uk, ok, ek := u[k*n:(k+1)*n], out[k*n:(k+1)*n], e[k*n:(k+1)*n]
		s, d := hs[int(src[k])*n:][:n], hd[int(dst[k])*n:][:n]
		for j := range uk {
			v := ((uk[j] + bias[j]) + s[j]) + d[j]
			uk[j] = v
			b := math.Float32bits(v)
			ok[j] = math.Float32frombits(b&^uint32(int32(b)>>31)) + ek[j]
		}
	}
}
