package gnn

import (
	"runtime"
	"sync"
)

// minParallelWork is the least number of multiply-adds (about 100 µs of
// work) each goroutine of a split kernel gets. Starting goroutines costs a
// few microseconds, and on a loaded machine a second goroutine may wait a
// whole scheduler slice for a core: on the shared 2-core development
// machine Cora-sized products (≤ 400k multiply-adds) ran faster unsplit.
const minParallelWork = 1 << 18

// ParallelWorkers is the number of goroutines a kernel over n output rows with
// about work multiply-adds should use: 1 unless every goroutine gets at
// least minParallelWork, and never more than GOMAXPROCS.
func ParallelWorkers(n, work int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n, work/minParallelWork))
}

// ParallelSplit calls fn on p contiguous chunks [lo, hi) covering [0, n), all but
// the first on new goroutines, and waits for them. Kernels call it only
// when ParallelWorkers says p > 1, and call their row function directly
// otherwise, so that the serial path allocates no closure. Every output
// row is computed by exactly one call with the same arithmetic either
// way, so results do not depend on the number of CPUs.
func ParallelSplit(n, p int, fn func(lo, hi int)) {
	splitAt(p, func(c int) int { return c * n / p }, fn)
}

// splitNNZ is split for a CSR with row pointers rowPtr: the chunks hold
// about the same number of stored entries rather than of rows, so that a
// few hub rows do not serialise a product.
func splitNNZ(rowPtr []int, p int, fn func(lo, hi int)) {
	rows := len(rowPtr) - 1
	nnz := rowPtr[rows]
	splitAt(p, func(c int) int {
		if c == p {
			return rows
		}
		return rowAtEntry(rowPtr, c*nnz/p)
	}, fn)
}

// splitAt runs fn on the chunks [bound(c), bound(c+1)) for c < p, where
// bound(0) = 0 and bound(p) is the row count.
func splitAt(p int, bound func(c int) int, fn func(lo, hi int)) {
	var wg sync.WaitGroup
	for c := 1; c < p; c++ {
		lo, hi := bound(c), bound(c+1)
		if lo < hi {
			wg.Go(func() { fn(lo, hi) })
		}
	}
	if hi := bound(1); hi > 0 {
		fn(0, hi)
	}
	wg.Wait()
}
