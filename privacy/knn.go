package privacy

import (
	"math"
	"sync"
	"sync/atomic"
)

// knnWorker is one goroutine's scratch space for the brute-force k-NN
// search: a gathered block of query rows and, per query, a min-heap of the
// k largest dot products seen so far (largest dot = nearest unit vector).
type knnWorker struct {
	dim, k int
	q      []float64   // queryBlock rows, gathered contiguously
	heaps  [][]float64 // per query: min-heap of up to k dots
}

func newKNNWorker(dim, k int) *knnWorker {
	w := &knnWorker{dim: dim, k: k, q: make([]float64, queryBlock*dim), heaps: make([][]float64, queryBlock)}
	for i := range w.heaps {
		w.heaps[i] = make([]float64, 0, k)
	}
	return w
}

// run computes d_k for the queries qs (indices into x's rows) into out.
// The data rows are swept in cache-sized blocks; inside a block a 4×2
// register-blocked kernel computes eight dot products per pass over the
// coordinates (measured fastest on amd64: wider tiles spill registers).
func (w *knnWorker) run(x []float64, qs []int, out []float64) {
	dim, m, n := w.dim, len(qs), len(x)/w.dim
	for i, qi := range qs {
		copy(w.q[i*dim:(i+1)*dim], x[qi*dim:(qi+1)*dim])
		w.heaps[i] = w.heaps[i][:0]
	}
	row := func(buf []float64, i int) []float64 { return buf[i*dim : (i+1)*dim] }
	for db := 0; db < n; db += dataBlock {
		de := min(db+dataBlock, n)
		i := 0
		for ; i+4 <= m; i += 4 {
			a0, a1, a2, a3 := row(w.q, i), row(w.q, i+1), row(w.q, i+2), row(w.q, i+3)
			j := db
			for ; j+2 <= de; j += 2 {
				s := dot4x2(a0, a1, a2, a3, row(x, j), row(x, j+1))
				for t := range 4 {
					w.push(i+t, qs[i+t], j, s[2*t])
					w.push(i+t, qs[i+t], j+1, s[2*t+1])
				}
			}
			for ; j < de; j++ {
				for t := range 4 {
					w.push(i+t, qs[i+t], j, dot(row(w.q, i+t), row(x, j)))
				}
			}
		}
		for ; i < m; i++ {
			for j := db; j < de; j++ {
				w.push(i, qs[i], j, dot(row(w.q, i), row(x, j)))
			}
		}
	}
	for i := range m {
		// The heap root is the k-th largest dot; for unit vectors
		// d² = 2 − 2·dot (clamped: rounding can make it slightly negative).
		out[i] = math.Sqrt(max(0, 2-2*w.heaps[i][0]))
	}
}

// push offers the dot product of query slot i (row index self) with row j.
func (w *knnWorker) push(i, self, j int, d float64) {
	if j != self {
		w.heaps[i] = pushTop(w.heaps[i], w.k, d)
	}
}

// pushTop offers d to h, a min-heap holding the k largest values offered
// so far, and returns the heap.
func pushTop(h []float64, k int, d float64) []float64 {
	if len(h) < k {
		h = append(h, d)
		for c := len(h) - 1; c > 0; { // sift up
			p := (c - 1) / 2
			if h[p] <= h[c] {
				break
			}
			h[p], h[c] = h[c], h[p]
			c = p
		}
		return h
	}
	if d <= h[0] {
		return h
	}
	h[0] = d
	for p := 0; ; { // sift down
		c := 2*p + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[p] <= h[c] {
			break
		}
		h[p], h[c] = h[c], h[p]
		p = c
	}
	return h
}

// symBlock is the tile edge of the symmetric all-points search.
const symBlock = 64

// knnAll computes d_k for every row, using the symmetry of dot products:
// only tiles (I, J) with I ≤ J of the n×n product are computed, each pair
// once, and offered to both rows' heaps. Each goroutine keeps its own heaps
// for all n rows (n·k float64s); they are merged at the end. Half the
// arithmetic of the query-by-query search.
func knnAll(x []float64, dim, k, workers int) []float64 {
	n := len(x) / dim
	nb := (n + symBlock - 1) / symBlock
	tiles := make([][2]int32, 0, nb*(nb+1)/2)
	for i := range nb {
		for j := i; j < nb; j++ {
			tiles = append(tiles, [2]int32{int32(i), int32(j)})
		}
	}
	heaps := make([][][]float64, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			backing := make([]float64, n*k)
			h := make([][]float64, n)
			for i := range h {
				h[i] = backing[i*k : i*k : (i+1)*k]
			}
			heaps[w] = h
			for {
				t := int(next.Add(1) - 1)
				if t >= len(tiles) {
					return
				}
				symTile(x, dim, k, h, int(tiles[t][0])*symBlock, int(tiles[t][1])*symBlock)
			}
		}()
	}
	wg.Wait()
	out := make([]float64, n)
	for i := range n {
		h := heaps[0][i]
		for _, o := range heaps[1:] {
			for _, d := range o[i] {
				h = pushTop(h, k, d)
			}
		}
		out[i] = math.Sqrt(max(0, 2-2*h[0]))
	}
	return out
}

// symTile offers the dot products of rows [i0, i0+symBlock) with rows
// [j0, j0+symBlock), pairs with i < j only, to both rows' heaps.
func symTile(x []float64, dim, k int, h [][]float64, i0, j0 int) {
	n := len(x) / dim
	i1, j1 := min(i0+symBlock, n), min(j0+symBlock, n)
	row := func(i int) []float64 { return x[i*dim : (i+1)*dim] }
	offer := func(i, j int, d float64) {
		if i < j {
			h[i] = pushTop(h[i], k, d)
			h[j] = pushTop(h[j], k, d)
		}
	}
	i := i0
	for ; i+4 <= i1; i += 4 {
		j := j0
		for ; j+2 <= j1; j += 2 {
			s := dot4x2(row(i), row(i+1), row(i+2), row(i+3), row(j), row(j+1))
			for t := range 4 {
				offer(i+t, j, s[2*t])
				offer(i+t, j+1, s[2*t+1])
			}
		}
		for ; j < j1; j++ {
			for t := range 4 {
				offer(i+t, j, dot(row(i+t), row(j)))
			}
		}
	}
	for ; i < i1; i++ {
		for j := j0; j < j1; j++ {
			offer(i, j, dot(row(i), row(j)))
		}
	}
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// dot4x2 returns the eight dot products of a0..a3 with b0, b1, as
// [a0·b0, a0·b1, a1·b0, a1·b1, …].
func dot4x2(a0, a1, a2, a3, b0, b1 []float64) [8]float64 {
	n := len(a0)
	a1, a2, a3, b0, b1 = a1[:n], a2[:n], a3[:n], b0[:n], b1[:n]
	var s00, s01, s10, s11, s20, s21, s30, s31 float64
	for t := range n {
		y0, y1 := b0[t], b1[t]
		x0 := a0[t]
		s00 += x0 * y0
		s01 += x0 * y1
		x1 := a1[t]
		s10 += x1 * y0
		s11 += x1 * y1
		x2 := a2[t]
		s20 += x2 * y0
		s21 += x2 * y1
		x3 := a3[t]
		s30 += x3 * y0
		s31 += x3 * y1
	}
	return [8]float64{s00, s01, s10, s11, s20, s21, s30, s31}
}
