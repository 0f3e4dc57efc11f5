package aggregator

import (
	"runtime"
	"sort"
	"sync"
)

// The weighted average of a round's vectors, the bulk of a FedAvg close:
// N updates of a million parameters each. It is computed one cache-sized
// block of parameters at a time (a float64 accumulator that stays in L1
// instead of an 8-byte-per-parameter array streamed N times), the blocks
// shared among the cores. Every parameter still sums its terms in client
// order, w_1·x_1 + w_2·x_2 + …, in float64, exactly as a plain loop over
// the clients would: the result does not depend on arrival order, on the
// block size or on the number of cores.

// averageBlock is how many parameters one block accumulates (16 KiB of
// float64).
const averageBlock = 2048

// averageTerm is one vector of the average with its weight.
type averageTerm struct {
	w float64
	v []float32
}

// average returns Σ w_i·v_i / Σ w_i over the contributions whose weight is
// positive and whose vector (vec) has n values, summed in client-id order,
// and the total weight; nil, 0 when there are none.
func average(cs []Contribution, n int, vec func(Contribution) []float32) ([]float32, float64) {
	sorted := append([]Contribution(nil), cs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Client < sorted[b].Client })
	var terms []averageTerm
	var total float64
	for _, c := range sorted {
		v := vec(c)
		if c.Weight <= 0 || len(v) != n {
			continue
		}
		total += c.Weight
		terms = append(terms, averageTerm{w: c.Weight, v: v})
	}
	if total == 0 {
		return nil, 0
	}
	out := make([]float32, n)
	blocks := (n + averageBlock - 1) / averageBlock
	workers := min(runtime.GOMAXPROCS(0), blocks)
	if n*len(terms) < 1<<18 {
		workers = 1 // not worth a goroutine
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acc [averageBlock]float64
			for b := w; b < blocks; b += workers {
				lo := b * averageBlock
				hi := min(lo+averageBlock, n)
				averageInto(out[lo:hi], acc[:hi-lo], terms, lo, total)
			}
		}()
	}
	wg.Wait()
	return out, total
}

// averageInto writes the average of the terms' values [lo, lo+len(out))
// into out, accumulating in acc.
func averageInto(out []float32, acc []float64, terms []averageTerm, lo int, total float64) {
	clear(acc)
	for _, t := range terms {
		accumulate(acc, t.v[lo:lo+len(acc)], t.w)
	}
	finish(out, acc, total)
}

// accumulateGo adds w·x to acc, x as long as acc.
func accumulateGo(acc []float64, x []float32, w float64) {
	x = x[:len(acc)]
	for i, v := range x {
		acc[i] += w * float64(v)
	}
}

// finishGo writes acc / total into out, as long as acc.
func finishGo(out []float32, acc []float64, total float64) {
	out = out[:len(acc)]
	for i, x := range acc {
		out[i] = float32(x / total)
	}
}
