package gnn

import "math"

// Optimizer updates a fixed set of parameters from their gradients.
type Optimizer interface {
	// Step applies one update to every parameter from its current gradient.
	Step()
	// Reset forgets any state (moments, step count), as after the
	// parameters were replaced by a federated average.
	Reset()
}

// ApplyWeightDecay adds the L2 gradient wd·W to G for every parameter with
// Decay set: the gradient of (wd/2)·‖W‖² added to the loss.
func ApplyWeightDecay(params []*Param, wd float64) {
	if wd == 0 {
		return
	}
	for _, p := range params {
		if p.Decay {
			AddScaled(p.G, float32(wd), p.W)
		}
	}
}

// Adam is the Adam optimizer (Kingma & Ba 2015) with bias correction, in
// the arithmetic of PyTorch's torch.optim.Adam:
//
//	m ← β1·m + (1-β1)·g,  v ← β2·v + (1-β2)·g²
//	W ← W - LR/(1-β1ᵗ) · m / (sqrt(v)/sqrt(1-β2ᵗ) + Eps)
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	params                []*Param
	m, v                  [][]float32
	t                     int
}

// NewAdam returns Adam over params with learning rate lr and the usual
// β1 = 0.9, β2 = 0.999, Eps = 1e-8.
func NewAdam(params []*Param, lr float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, params: params}
	a.m = make([][]float32, len(params))
	a.v = make([][]float32, len(params))
	for i, p := range params {
		a.m[i] = make([]float32, len(p.W.Data))
		a.v[i] = make([]float32, len(p.W.Data))
	}
	return a
}

// Step applies one Adam update.
func (a *Adam) Step() {
	a.t++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.t))
	step := float32(a.LR / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	c1, c2 := 1-b1, 1-b2
	eps := float32(a.Eps)
	for i, p := range a.params {
		w := p.W.Data
		g := p.G.Data[:len(w)]
		m := a.m[i][:len(w)]
		v := a.v[i][:len(w)]
		for j, gj := range g {
			mj := b1*m[j] + c1*gj
			vj := b2*v[j] + c2*gj*gj
			m[j], v[j] = mj, vj
			w[j] -= step * mj / (float32(math.Sqrt(float64(vj)))*invSqrtBC2 + eps)
		}
	}
}

// Reset clears the moments and the step count.
func (a *Adam) Reset() {
	a.t = 0
	for i := range a.m {
		clear(a.m[i])
		clear(a.v[i])
	}
}

// SGD is stochastic gradient descent with optional heavy-ball momentum, in
// PyTorch's form: b ← μ·b + g (b = g on the first step), W ← W - LR·b.
type SGD struct {
	LR, Momentum float64
	params       []*Param
	buf          [][]float32
	started      bool
}

// NewSGD returns SGD over params with learning rate lr and momentum μ (0
// for plain SGD).
func NewSGD(params []*Param, lr, momentum float64) *SGD {
	return &SGD{LR: lr, Momentum: momentum, params: params}
}

// Step applies one SGD update.
func (s *SGD) Step() {
	lr, mu := float32(s.LR), float32(s.Momentum)
	if mu != 0 && s.buf == nil {
		s.buf = make([][]float32, len(s.params))
		for i, p := range s.params {
			s.buf[i] = make([]float32, len(p.W.Data))
		}
	}
	for i, p := range s.params {
		w := p.W.Data
		g := p.G.Data[:len(w)]
		if mu == 0 {
			for j, gj := range g {
				w[j] -= lr * gj
			}
			continue
		}
		b := s.buf[i][:len(w)]
		for j, gj := range g {
			if s.started {
				b[j] = mu*b[j] + gj
			} else {
				b[j] = gj
			}
			w[j] -= lr * b[j]
		}
	}
	s.started = mu != 0
}

// Reset clears the momentum buffers.
func (s *SGD) Reset() {
	s.started = false
	for i := range s.buf {
		clear(s.buf[i])
	}
}
