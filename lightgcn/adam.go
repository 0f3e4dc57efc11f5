package lightgcn

import (
	"math"

	"graphfed/gnn"
)

// adam is gnn.Adam's update (PyTorch's torch.optim.Adam arithmetic) over
// one flat parameter, split across goroutines: LightGCN's gradient is
// dense over every embedding after propagation, and at Gowalla's 4.5M
// parameters a serial update is a tenth of a step.
type adam struct {
	lr, beta1, beta2, eps float64
	m, v                  []float32
	t                     int
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, m: make([]float32, n), v: make([]float32, n)}
}

// step applies one update to w from the gradient g (len(w)).
func (a *adam) step(w, g []float32) {
	a.t++
	bc1 := 1 - math.Pow(a.beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.beta2, float64(a.t))
	stepSize := float32(a.lr / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2 := float32(a.beta1), float32(a.beta2)
	c1, c2 := 1-b1, 1-b2
	eps := float32(a.eps)
	rows := func(lo, hi int) {
		w, g, m, v := w[lo:hi], g[lo:hi], a.m[lo:hi], a.v[lo:hi]
		g, m, v = g[:len(w)], m[:len(w)], v[:len(w)]
		for j, gj := range g {
			mj := b1*m[j] + c1*gj
			vj := b2*v[j] + c2*gj*gj
			m[j], v[j] = mj, vj
			w[j] -= stepSize * mj / (float32(math.Sqrt(float64(vj)))*invSqrtBC2 + eps)
		}
	}
	if p := gnn.ParallelWorkers(len(w), 8*len(w)); p > 1 {
		gnn.ParallelSplit(len(w), p, rows)
		return
	}
	rows(0, len(w))
}
