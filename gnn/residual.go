package gnn

import (
	"fmt"
	"math"
)

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
