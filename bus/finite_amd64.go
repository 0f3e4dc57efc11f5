package bus

import "golang.org/x/sys/cpu"

// allFiniteAVX is implemented in finite_amd64.s.
//
//go:noescape
func allFiniteAVX(x *float32, n int) bool

// firstNonFinite returns the index of the first NaN or ±Inf, or -1: with
// AVX2, 32 values are checked at a time, and the index is looked for
// only in a block that has one.
func firstNonFinite(xs []float32) int {
	if !cpu.X86.HasAVX2 {
		return firstNonFiniteGo(xs)
	}
	const block = 1024
	for start := 0; start < len(xs); start += block {
		blk := xs[start:min(start+block, len(xs))]
		n := len(blk) &^ 31
		if n > 0 && allFiniteAVX(&blk[0], n) {
			blk = blk[n:]
			if i := firstNonFiniteGo(blk); i >= 0 {
				return start + n + i
			}
			continue
		}
		if i := firstNonFiniteGo(blk); i >= 0 {
			return start + i
		}
	}
	return -1
}
