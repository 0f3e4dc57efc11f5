//go:build amd64 && !purego

package gnn

import "golang.org/x/sys/cpu"

// The dense products hand their leading multiple of four output rows and
// of 32 columns to the AVX-512 register tiles of gemm_amd64.s when the CPU
// and OS support AVX-512 (golang.org/x/sys/cpu checks both); the rest, and
// everything on other CPUs, runs through the row kernels of kernel.go.

//go:noescape
func gemmTile64(d, a, b *float32, groups, k, sar, saq, ldb, ldd, acc int, bias *float32)

//go:noescape
func gemmTile32(d, a, b *float32, groups, k, sar, saq, ldb, ldd, acc int, bias *float32)

//go:noescape
func gemmTile32x8(d, a, b *float32, groups, k, sar, saq, ldb, ldd, acc int, bias *float32)

// haveAVX512 reports AVX-512F with ZMM state saved by the OS (and FMA,
// which the row kernels need alongside). Set once at start-up and
// read-only afterwards.
var haveAVX512 = cpu.X86.HasAVX512F && haveFMA

// gemmTiles runs the tiles over rows [0, rows&^3) and columns
// [0, n&^31) of d = A·b (d += A·b when acc), where A's element (r, q) is
// a[r·sar + q·saq] for q < k, b is k rows of stride ldb and d rows of
// stride ldd; with bias (len ≥ n) non-nil, each finished row has it added
// after its sums, as AddBias would. It returns the number of rows and
// columns it computed (0, 0 without AVX-512 or when either would be 0). It
// panics, as a bounds check would, when a slice is too short for the
// extents the assembly reads.
func gemmTiles(d []float32, ldd int, a []float32, sar, saq int, b []float32, ldb, rows, k, n int, acc bool, bias []float32) (int, int) {
	groups, w := rows/4, n&^31
	if !haveAVX512 || groups == 0 || w == 0 || k == 0 {
		return 0, 0
	}
	r := groups * 4
	checkLen("gemm tiles", len(a), (r-1)*sar+(k-1)*saq+1)
	checkLen("gemm tiles", len(b), (k-1)*ldb+w)
	checkLen("gemm tiles", len(d), (r-1)*ldd+w)
	if bias != nil {
		checkLen("gemm tiles", len(bias), w)
	}
	if sar < 0 || saq < 0 || ldb < w || ldd < w {
		panic("gnn: gemm tiles: negative or overlapping strides")
	}
	// The reduction runs in chunks of gemmChunk steps so that the chunk of
	// b (gemmChunk×64 values, 32 KiB) stays in the L1 cache while every
	// row group passes over it; later chunks add into d, continuing each
	// element's sum in order.
	for q0 := 0; q0 < k; q0 += gemmChunk {
		kc := min(gemmChunk, k-q0)
		f := 0
		if acc || q0 > 0 {
			f = 1
		}
		ao, bo := q0*saq, q0*ldb
		last := q0+kc == k && bias != nil
		j := 0
		for ; j+64 <= w; j += 64 {
			gemmTile64(&d[j], &a[ao], &b[bo+j], groups, kc, sar, saq, ldb, ldd, f, biasAt(bias, j, last))
		}
		if j < w {
			// Eight rows at a time where there are, the last four alone.
			if g8 := groups / 2; g8 > 0 {
				gemmTile32x8(&d[j], &a[ao], &b[bo+j], g8, kc, sar, saq, ldb, ldd, f, biasAt(bias, j, last))
			}
			if groups%2 == 1 {
				r8 := groups / 2 * 8
				gemmTile32(&d[r8*ldd+j], &a[ao+r8*sar], &b[bo+j], 1, kc, sar, saq, ldb, ldd, f, biasAt(bias, j, last))
			}
		}
	}
	return r, w
}

// gemmChunk is the reduction length of one pass of the tiles.
const gemmChunk = 128

// biasAt is &bias[j] when on, else nil (no bias for the tile).
func biasAt(bias []float32, j int, on bool) *float32 {
	if !on {
		return nil
	}
	return &bias[j]
}
