package gnn

import "math"

// RMSProp is the RMSProp optimizer (Tieleman & Hinton 2012) in the
// arithmetic of PyTorch's torch.optim.RMSprop without momentum or
// centering:
//
//	v ← α·v + (1-α)·g²
//	W ← W - LR · g / (sqrt(v) + Eps)
//
// LPSFed trains with it (lr 5e-4). Unlike Adam there is no bias
// correction, so the first steps are larger than LR (|g|/sqrt((1-α)g²) =
// 10 for α = 0.99), as in PyTorch.
type RMSProp struct {
	LR, Alpha, Eps float64
	params         []*Param
	v              [][]float32
}

// NewRMSProp returns RMSProp over params with learning rate lr and
// PyTorch's defaults α = 0.99, Eps = 1e-8.
func NewRMSProp(params []*Param, lr float64) *RMSProp {
	r := &RMSProp{LR: lr, Alpha: 0.99, Eps: 1e-8, params: params}
	r.v = make([][]float32, len(params))
	for i, p := range params {
		r.v[i] = make([]float32, len(p.W.Data))
	}
	return r
}

// Step applies one RMSProp update to every parameter.
func (r *RMSProp) Step() {
	for i := range r.params {
		r.StepParam(i)
	}
}

// StepParam updates parameter i only. Models whose parameters are touched
// sparsely (embedding tables of which a batch uses a few rows) call it to
// skip the rest; skipping a parameter also skips the decay of its v,
// which is PyTorch's behaviour for a parameter whose grad is None.
func (r *RMSProp) StepParam(i int) {
	lr, a, eps := float32(r.LR), float32(r.Alpha), float32(r.Eps)
	c := 1 - a
	p := r.params[i]
	w := p.W.Data
	g := p.G.Data[:len(w)]
	v := r.v[i][:len(w)]
	for j, gj := range g {
		vj := a*v[j] + c*gj*gj
		v[j] = vj
		w[j] -= lr * gj / (float32(math.Sqrt(float64(vj))) + eps)
	}
}

// Reset clears the squared-gradient averages.
func (r *RMSProp) Reset() {
	for i := range r.v {
		clear(r.v[i])
	}
}
