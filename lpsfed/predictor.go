package lpsfed

import (
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// predictor is the predictive MLP of Eq. 5 on user–item pairs,
// s_ui = MLP([U_u, V_i, U_u⊙V_i]). Its first map W = [W_a; W_b; W_c]
// (3d×h1) is applied as Z·W_a and Z·W_b once per row and only the
// elementwise-product block per pair, so a pair costs O(d·h1) however many
// pairs share a row. With hidden = 0 it is the single affine map
// s = [U, V, U⊙V]·w + b (h1 = 1).
type predictor struct {
	d, hidden int
	W1, B1    *gnn.Param // 3d×h1, 1×h1
	W2, B2    *gnn.Param // hidden×1, 1×1 when hidden > 0, else nil

	ua, vb   *gnn.Tensor // Z·W_a and Z·W_b, s×h1
	act      []float32   // tanh activations, pairs×hidden
	dua, dvb *gnn.Tensor // gradients of ua and vb
	ws, wsz  *gnn.Tensor
	pre, dp  []float32 // one pair's first-layer output and its gradient
}

func newPredictor(d, hidden int) *predictor {
	h1 := 1
	if hidden > 0 {
		h1 = hidden
	}
	p := &predictor{d: d, hidden: hidden,
		W1: gnn.NewParam("pred.w1", 3*d, h1, true), B1: gnn.NewParam("pred.b1", 1, h1, false),
		pre: make([]float32, h1), dp: make([]float32, h1)}
	if hidden > 0 {
		p.W2 = gnn.NewParam("pred.w2", hidden, 1, true)
		p.B2 = gnn.NewParam("pred.b2", 1, 1, false)
	}
	return p
}

// params returns the predictive MLP's parameters, which are federated.
func (p *predictor) params() []*gnn.Param {
	if p.W2 == nil {
		return []*gnn.Param{p.W1, p.B1}
	}
	return []*gnn.Param{p.W1, p.B1, p.W2, p.B2}
}

func (p *predictor) initParams(rng *rand.Rand) {
	for _, q := range p.params() {
		if q.W.Rows == 1 {
			q.W.Zero()
		} else {
			q.Glorot(rng)
		}
	}
}

func (p *predictor) block(t *gnn.Tensor, b int) *gnn.Tensor { return t.Slice(b*p.d, (b+1)*p.d) }

// prepare computes the per-row terms Z·W_a and Z·W_b for z (s×d).
func (p *predictor) prepare(z *gnn.Tensor) {
	h1 := p.W1.W.Cols
	p.ua = buf(&p.ua, z.Rows, h1)
	p.vb = buf(&p.vb, z.Rows, h1)
	gnn.MatMul(p.ua, z, p.block(p.W1.W, 0))
	gnn.MatMul(p.vb, z, p.block(p.W1.W, 1))
}

// first sets p.pre to the first-layer output of pair (row u, row i) of z.
func (p *predictor) first(z *gnn.Tensor, u, i int32) {
	d, h1 := p.d, p.W1.W.Cols
	zu, zi := z.Row(int(u)), z.Row(int(i))
	wc := p.W1.W.Data[2*d*h1:]
	copy(p.pre, p.B1.W.Data)
	ua, vb := p.ua.Row(int(u)), p.vb.Row(int(i))
	for j := range h1 {
		p.pre[j] += ua[j] + vb[j]
	}
	for k := range d {
		q := zu[k] * zi[k]
		if q == 0 {
			continue
		}
		w := wc[k*h1 : (k+1)*h1]
		for j := range h1 {
			p.pre[j] += q * w[j]
		}
	}
}

// forward scores the pairs (rows u[k], i[k]) of z into s, after prepare.
func (p *predictor) forward(z *gnn.Tensor, u, i []int32, s []float64) {
	if p.hidden == 0 {
		p.forwardAffine(z, u, i, s)
		return
	}
	p.forwardPairs(z, u, i, s)
}

// forwardPairs is forward one pair at a time through first, for any
// hidden width: the reference forwardAffine is checked against.
func (p *predictor) forwardPairs(z *gnn.Tensor, u, i []int32, s []float64) {
	if p.hidden > 0 {
		p.act = growF32(p.act, len(u)*p.hidden)
	}
	for k := range u {
		p.first(z, u[k], i[k])
		if p.hidden == 0 {
			s[k] = float64(p.pre[0])
			continue
		}
		a := p.act[k*p.hidden : (k+1)*p.hidden]
		acc := float64(p.B2.W.Data[0])
		for j, v := range p.pre {
			a[j] = float32(math.Tanh(float64(v)))
			acc += float64(a[j]) * float64(p.W2.W.Data[j])
		}
		s[k] = acc
	}
}

// backward accumulates parameter gradients and dz (s×d) from ds, the
// gradient of the loss with respect to the scores of the last forward.
func (p *predictor) backward(z *gnn.Tensor, u, i []int32, ds []float64, dz *gnn.Tensor) {
	h1 := p.W1.W.Cols
	p.dua = buf(&p.dua, z.Rows, h1)
	p.dvb = buf(&p.dvb, z.Rows, h1)
	p.dua.Zero()
	p.dvb.Zero()
	if p.hidden == 0 {
		p.backwardAffine(z, u, i, ds, dz)
		p.backwardMapsAffine(z, dz)
		return
	}
	p.backwardPairs(z, u, i, ds, dz)
	p.backwardMaps(z, dz)
}

// backwardPairs is the pair loop of backward one pair at a time, for any
// hidden width: the reference backwardAffine is checked against.
func (p *predictor) backwardPairs(z *gnn.Tensor, u, i []int32, ds []float64, dz *gnn.Tensor) {
	d, h1 := p.d, p.W1.W.Cols
	wc, gwc := p.W1.W.Data[2*d*h1:], p.W1.G.Data[2*d*h1:]
	for k := range u {
		g := float32(ds[k])
		if g == 0 {
			continue
		}
		if p.hidden == 0 {
			p.dp[0] = g
		} else {
			a := p.act[k*p.hidden : (k+1)*p.hidden]
			p.B2.G.Data[0] += g
			for j, v := range a {
				p.W2.G.Data[j] += g * v
				p.dp[j] = g * p.W2.W.Data[j] * (1 - v*v)
			}
		}
		du, dv := p.dua.Row(int(u[k])), p.dvb.Row(int(i[k]))
		for j, v := range p.dp {
			p.B1.G.Data[j] += v
			du[j] += v
			dv[j] += v
		}
		zu, zi := z.Row(int(u[k])), z.Row(int(i[k]))
		dzu, dzi := dz.Row(int(u[k])), dz.Row(int(i[k]))
		for c := range d {
			w, gw := wc[c*h1:(c+1)*h1], gwc[c*h1:(c+1)*h1]
			q := zu[c] * zi[c]
			var dq float32
			for j, v := range p.dp {
				gw[j] += q * v
				dq += w[j] * v
			}
			dzu[c] += dq * zi[c]
			dzi[c] += dq * zu[c]
		}
	}
}

// backwardMaps chains dua and dvb, the gradients of Z·W_a and Z·W_b,
// through the two maps into their weights and dz.
func (p *predictor) backwardMaps(z, dz *gnn.Tensor) {
	addMatMulTN(p.block(p.W1.G, 0), z, p.dua, &p.ws)
	addMatMulTN(p.block(p.W1.G, 1), z, p.dvb, &p.ws)
	addMatMulNT(dz, p.dua, p.block(p.W1.W, 0), &p.wsz)
	addMatMulNT(dz, p.dvb, p.block(p.W1.W, 1), &p.wsz)
}

// growF32 returns s resized to n, reallocating when too short.
func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
