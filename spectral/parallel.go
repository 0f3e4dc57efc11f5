package spectral

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minParallelWork is the least number of multiply-adds worth a second
// goroutine: starting one costs microseconds, and on the shared 2-core
// machine a second goroutine may wait a scheduler slice for its core.
const minParallelWork = 1 << 16

// piecesPerWorker: work is cut into this many pieces per goroutine and
// handed out as goroutines free up, so that a goroutine whose thread the OS
// parks (the development machine is shared) delays the kernel by a piece,
// not by half of it.
const piecesPerWorker = 8

// workersFor is how many goroutines a kernel of about work multiply-adds
// split into pieces items should use.
func workersFor(pieces, work int) int {
	return max(1, min(runtime.GOMAXPROCS(0), pieces, work/minParallelWork))
}

// forPieces runs fn(w, lo, hi) for the pieces [bound(i), bound(i+1)),
// i < pieces, on up to workers goroutines; w < workers identifies the
// goroutine, for per-goroutine scratch space. bound must be non-decreasing
// with bound(0) = 0; empty pieces are skipped. Pieces are independent, so
// which goroutine runs which piece does not change any result.
func forPieces(pieces, workers int, bound func(i int) int, fn func(w, lo, hi int)) {
	workers = max(1, min(workers, pieces))
	if workers == 1 {
		for i := 0; i < pieces; i++ {
			if lo, hi := bound(i), bound(i+1); lo < hi {
				fn(0, lo, hi)
			}
		}
		return
	}
	var next atomic.Int64
	run := func(w int) {
		for {
			i := int(next.Add(1)) - 1
			if i >= pieces {
				return
			}
			if lo, hi := bound(i), bound(i+1); lo < hi {
				fn(w, lo, hi)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { run(w) })
	}
	run(0)
	wg.Wait()
}

// forChunks runs fn(w, lo, hi) over the chunks of [0, n) of size chunk
// (the last may be shorter); see forPieces.
func forChunks(n, chunk, workers int, fn func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	forPieces((n+chunk-1)/chunk, workers, func(i int) int { return min(i*chunk, n) }, fn)
}

// nnzBound returns a bound function for forPieces that cuts the rows of a
// CSR with row pointers rowPtr into pieces holding about the same number of
// stored entries, so that a few hub rows do not serialize a sparse product.
func nnzBound(rowPtr []int, pieces int) func(i int) int {
	rows := len(rowPtr) - 1
	nnz := rowPtr[rows]
	return func(i int) int {
		if i >= pieces {
			return rows
		}
		target := i * nnz / pieces
		lo, hi := 0, rows
		for lo < hi { // first row whose start is at or after target
			mid := (lo + hi) / 2
			if rowPtr[mid] < target {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return lo
	}
}
