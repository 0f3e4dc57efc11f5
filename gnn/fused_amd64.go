//go:build amd64 && !purego

package gnn

import "unsafe"

//go:noescape
func gatherSlots64(d, w *float32, idx *int32, delta, pairs, k, n int, bias *float32)

//go:noescape
func gatherSlots32(d, w *float32, idx *int32, delta, quads, k, n int, bias *float32)

// gatherSlotsWide runs GatherSlots' leading rows in the assembly tiles
// when n is 64 (two rows at a time) or 32 (four), adding bias (when
// non-nil) to each, and returns how many rows it computed.
func gatherSlotsWide(d []float32, cols []int32, vals []float32, k int, w []float32, n int, bias []float32) int {
	rows := len(cols) / k
	group := 0
	switch {
	case !haveAVX512:
	case n == 64:
		group = 2
	case n == 32:
		group = 4
	}
	if group == 0 || rows < group {
		return 0
	}
	checkRows("gather slots", cols, len(w)/n)
	var bp *float32
	if bias != nil {
		checkLen("gather slots", len(bias), n)
		bp = &bias[0]
	}
	g := rows / group
	// The assembly reaches a slot's value at a fixed distance from its
	// column: both arrays are indexed alike, whatever their addresses.
	delta := int(uintptr(unsafe.Pointer(&vals[0])) - uintptr(unsafe.Pointer(&cols[0])))
	if n == 64 {
		gatherSlots64(&d[0], &w[0], &cols[0], delta, g, k, n, bp)
	} else {
		gatherSlots32(&d[0], &w[0], &cols[0], delta, g, k, n, bp)
	}
	return g * group
}

//go:noescape
func residualReLU(u, out, e, bias, hs, hd *float32, src, dst *int32, rows, n int)

// residualReLUWide runs ResidualReLURows in AVX-512 when n is a multiple
// of 16 and reports whether it did.
func residualReLUWide(u, out, e, bias, hs, hd []float32, src, dst []int32, n int) bool {
	if !haveAVX512 || n%16 != 0 {
		return false
	}
	checkRows("residual relu rows", src, len(hs)/n)
	checkRows("residual relu rows", dst, len(hd)/n)
	residualReLU(&u[0], &out[0], &e[0], &bias[0], &hs[0], &hd[0], &src[0], &dst[0], len(src), n)
	return true
}
