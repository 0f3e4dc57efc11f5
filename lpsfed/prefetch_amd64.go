//go:build amd64 && !purego

package lpsfed

// prefetchLines asks the CPU to bring lines ≥ 1 cache lines (64 bytes)
// from p on into cache: a hint with no effect on results, which lets the
// pair loops overlap the memory latency of rows they will reach a few
// pairs later (their rows are random and mostly not in cache).
//
//go:noescape
func prefetchLines(p *float32, lines int)
