package lpsfed

import (
	"runtime"
	"sync"
)

// Parallel loops. Every loop here splits an index range into contiguous
// chunks whose outputs are disjoint (pairs, columns, users), and every
// output element is computed by the same sequence of floating-point
// operations however the range is split: results are bit-for-bit the same
// for any GOMAXPROCS and any scheduling, and the same as a serial loop.
// Reductions (loss sums, bias gradients) stay serial or are split by
// output column, never by summand.

// minChunk is the least work (in rough multiply-adds) a goroutine is
// given: starting one costs a few microseconds, and on a loaded machine it
// may wait a scheduler slice for a core.
const minChunk = 1 << 16

// parts is how many chunks a loop over n items of about cost units of
// work each should use: 1 unless each chunk gets at least minChunk, and
// never more than GOMAXPROCS or n.
func parts(n, cost int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n, n*max(cost, 1)/minChunk))
}

// parallelFor calls fn on p contiguous chunks [lo, hi) covering [0, n),
// all but the first on new goroutines, and waits. With p = 1 it is a
// plain call.
func parallelFor(n, p int, fn func(lo, hi int)) {
	if p <= 1 || n <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for c := 1; c < p; c++ {
		lo, hi := c*n/p, (c+1)*n/p
		if lo < hi {
			wg.Go(func() { fn(lo, hi) })
		}
	}
	fn(0, n/p)
	wg.Wait()
}

// parallelCols is parallelFor over the columns [0, n) of row-major data,
// in chunks that are multiples of 16 columns (one 64-byte cache line of
// float32) so that two goroutines never write the same cache line of a
// row whose start is line-aligned.
func parallelCols(n, p int, fn func(lo, hi int)) {
	const line = 16
	lines := (n + line - 1) / line
	p = min(p, lines)
	if p <= 1 {
		fn(0, n)
		return
	}
	parallelFor(lines, p, func(lo, hi int) { fn(lo*line, min(hi*line, n)) })
}
