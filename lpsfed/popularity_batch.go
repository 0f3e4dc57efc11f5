package lpsfed

import "math"

// The popularity branch over a whole batch. A batch has 80k pairs but
// only as many distinct cosines as pairs of popularity buckets (a few
// thousand on Gowalla), so cos ξ̂ and the two factors of its gradient are
// computed once per bucket pair and step, by the same expressions as cos
// and backward, and the pairs only look them up and scale them: results
// are bit-for-bit those of calling cos and backward per pair.

// popBatch caches, for the bucket pairs of one batch, cos ξ̂ and the
// gradient factors ∂c/∂a and ∂c/∂b of each (the weights change every
// step, so it is refilled per batch).
type popBatch struct {
	used   []bool    // bucket pair (bu·nI + bi) occurs in the batch
	list   []int32   // the used bucket pairs
	cos    []float64 // per bucket pair
	fa, fb []float64 // per bucket pair, d each: ∂c/∂a and ∂c/∂b
	pair   []int32   // per pair of the batch: its bucket pair
}

// batchCos fills out[k] with cos ξ̂ of (users[k], items[k]) for every
// pair, and prepares the gradient factors backwardBatch uses.
func (p *popularity) batchCos(users, items []int32, out []float64) {
	nI, d := p.I.W.Rows, p.U.W.Cols
	c := &p.batch
	if n := p.U.W.Rows * nI; len(c.used) != n {
		c.used, c.cos = make([]bool, n), make([]float64, n)
		c.fa, c.fb = make([]float64, n*d), make([]float64, n*d)
	}
	c.pair = growI32(c.pair, len(users))
	c.list = c.list[:0]
	for k, u := range users {
		q := p.ub[u]*int32(nI) + p.ib[items[k]]
		c.pair[k] = q
		if !c.used[q] {
			c.used[q] = true
			c.list = append(c.list, q)
		}
	}
	parallelFor(len(c.list), parts(len(c.list), 8*d), func(lo, hi int) {
		for _, q := range c.list[lo:hi] {
			c.used[q] = false // reset for the next batch
			a, b := p.U.W.Row(int(q)/nI), p.I.W.Row(int(q)%nI)
			ab, aa, bb := dotNorms(a, b)
			nab := math.Sqrt(aa*bb + normEps)
			cs := ab / nab
			c.cos[q] = cs
			fa, fb := c.fa[int(q)*d:int(q)*d+d], c.fb[int(q)*d:int(q)*d+d]
			for k := range a {
				x, y := float64(a[k]), float64(b[k])
				fa[k] = y/nab - cs*x/(aa+normEps)
				fb[k] = x/nab - cs*y/(bb+normEps)
			}
		}
	})
	for k, q := range c.pair {
		out[k] = c.cos[q]
	}
}

// backwardBatch adds g[k]·∂cos ξ̂/∂(embeddings) of every pair of the last
// batchCos to the tables' gradients, pair by pair in order within each
// column (split across cores by columns).
func (p *popularity) backwardBatch(users, items []int32, g []float64) {
	d := p.U.W.Cols
	c := &p.batch
	parallelCols(d, parts(len(users), 2*d), func(lo, hi int) {
		n := hi - lo
		for k, q := range c.pair[:len(users)] {
			gk := g[k]
			if gk == 0 {
				continue
			}
			bu, bi := int(p.ub[users[k]]), int(p.ib[items[k]])
			ga, gb := p.U.G.Data[bu*d+lo:bu*d+hi], p.I.G.Data[bi*d+lo:bi*d+hi]
			fa, fb := c.fa[int(q)*d+lo:int(q)*d+hi], c.fb[int(q)*d+lo:int(q)*d+hi]
			ga, gb, fa, fb = ga[:n], gb[:n], fa[:n], fb[:n]
			for j := range n {
				ga[j] += float32(gk * fa[j])
				gb[j] += float32(gk * fb[j])
			}
		}
	})
}

func growI32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
