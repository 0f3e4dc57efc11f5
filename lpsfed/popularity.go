package lpsfed

import (
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// popularity holds the popularity encoders f_ψ and f_φ of §3.1: lookup
// tables from a user's or item's popularity bucket (its training degree on
// a log scale, see popBucket) to a d-dimensional embedding. The bias score
// of a pair is the cosine of its two embeddings, cos ξ̂_ui. The tables are
// local: the paper keeps them on the client because they encode
// fine-grained preference patterns.
type popularity struct {
	U, I   *gnn.Param // users' and items' tables, buckets×d
	ub, ib []int32    // bucket of every user and item
	batch  popBatch   // batchCos's cache
}

func newPopularity(d *Data, dim int, rng *rand.Rand, std float64) *popularity {
	ud, id := d.Degrees()
	ub, nu := buckets(ud)
	ib, ni := buckets(id)
	p := &popularity{U: gnn.NewParam("pop.user", nu, dim, true), I: gnn.NewParam("pop.item", ni, dim, true), ub: ub, ib: ib}
	// Every row starts at one shared random direction plus smaller noise
	// (cos ξ̂ ≈ 0.9, ξ̂ ≈ 0.4): margins start small and grow as the bias
	// loss separates popular from unpopular pairs. Independent random rows
	// would start every ξ̂ near π/2, so that R̂ + γξ̂ ≈ π for every
	// positive at the start, where the BC loss is clamped and has no
	// gradient for positives, while the negatives keep pushing all scores
	// down: training collapses to tanh(s) = −1 everywhere.
	common := make([]float64, dim)
	for k := range common {
		common[k] = rng.NormFloat64()
	}
	for _, t := range []*gnn.Tensor{p.U.W, p.I.W} {
		for r := range t.Rows {
			row := t.Row(r)
			for k := range row {
				row[k] = float32(std * (common[k] + popNoise*rng.NormFloat64()))
			}
		}
	}
	return p
}

// popNoise is the spread of the popularity embeddings around their common
// starting direction, relative to its scale.
const popNoise = 0.3

func (p *popularity) params() []*gnn.Param { return []*gnn.Param{p.U, p.I} }

// normEps keeps cosines of (near-)zero embeddings finite.
const normEps = 1e-12

// dotNorms returns a·b, a·a and b·b in float64, one pass, in index order
// (the batched and the per-pair paths must agree to the bit).
func dotNorms(a, b []float32) (ab, aa, bb float64) {
	for k, x := range a {
		y := float64(b[k])
		ab += float64(x) * y
		aa += float64(x) * float64(x)
		bb += y * y
	}
	return ab, aa, bb
}

// cos returns cos ξ̂ of user u and item i.
func (p *popularity) cos(u, i int32) float64 {
	a, b := p.U.W.Row(int(p.ub[u])), p.I.W.Row(int(p.ib[i]))
	ab, aa, bb := dotNorms(a, b)
	return ab / math.Sqrt(aa*bb+normEps)
}

// backward adds g·∂cos ξ̂_ui/∂(embeddings) to the tables' gradients:
// ∂c/∂a = b/(‖a‖‖b‖) − c·a/‖a‖², and symmetrically for b.
func (p *popularity) backward(u, i int32, g float64) {
	if g == 0 {
		return
	}
	a, b := p.U.W.Row(int(p.ub[u])), p.I.W.Row(int(p.ib[i]))
	ga, gb := p.U.G.Row(int(p.ub[u])), p.I.G.Row(int(p.ib[i]))
	ab, aa, bb := dotNorms(a, b)
	nab := math.Sqrt(aa*bb + normEps)
	c := ab / nab
	for k := range a {
		x, y := float64(a[k]), float64(b[k])
		ga[k] += float32(g * (y/nab - c*x/(aa+normEps)))
		gb[k] += float32(g * (x/nab - c*y/(bb+normEps)))
	}
}

// angle returns ξ̂ = arccos(c), with c clamped to [−1, 1] against rounding.
func angle(c float64) float64 { return math.Acos(max(-1, min(1, c))) }
