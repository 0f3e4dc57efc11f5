//go:build amd64 && !purego

package edgegnn

import "golang.org/x/sys/cpu"

//go:noescape
func gemm2x32(d, a, b *float32, rows, k, n int, bias *float32)

// edgeTilesApply reports whether edgeTiles runs: AVX2 and FMA without
// AVX-512 (where package gnn's own tiles run, and its results are the
// ones the golden training fingerprints pin), 32-column multiples, k ≥ 1.
func edgeTilesApply(k, n int) bool {
	return cpu.X86.HasAVX2 && cpu.X86.HasFMA && !cpu.X86.HasAVX512F && k > 0 && n > 0 && n%32 == 0
}

// edgeTiles sets rows [lo, hi) of d (m×n) to a·b + bias (bias nil for
// none), for a m×k and b k×n, packed row-major; the caller checked the
// shapes and edgeTilesApply.
func edgeTiles(d, a, b, bias []float32, k, n, lo, hi int) {
	if lo >= hi {
		return
	}
	d, a = d[lo*n:hi*n], a[lo*k:hi*k]
	_, _ = b[k*n-1], a[(hi-lo)*k-1]
	var bp *float32
	if bias != nil {
		bp = &bias[:n][0]
	}
	gemm2x32(&d[0], &a[0], &b[0], hi-lo, k, n, bp)
}
