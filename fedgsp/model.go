package fedgsp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// model is FedGSP's spectral network (UniFilter's GFK: Combination + MLP):
//
//	z = Σ_{k=0..K} c_k ⊙ dropout_C(B_k)                       c_k ∈ R^d
//	x_1 = dropout_M(z);  h_l = ReLU(x_l W_l + b_l [+ x_l])     l = 1..L−1
//	x_{l+1} = dropout_M(h_l);  logits = x_L W_L + b_L [+ x_L]
//
// with the residual [+ x_l] exactly when the layer is square, as the
// authors' Dense does. It is node-wise (the graph is in the fixed inputs
// B_k), so training touches the training rows only. Unlike the authors'
// bias-free Dense, every layer has a bias (zero at Init); the coefficients
// come first in the parameter list, as the contract's flat layout requires.
type model struct {
	orders, dim, classes int
	dropC                float64
	coef                 []*gnn.Param // K+1 params, 1×d each
	dense                []*dense
	params, mlp          []*gnn.Param

	// Forward state kept for Backward.
	inputs []*gnn.Tensor
	z      *gnn.Tensor
	seed   uint64 // dropout_C mask seed of the last training forward
	trainC bool
	dz     *gnn.Tensor
}

// dense is one Dense layer with its dropout on the input.
type dense struct {
	w, b     *gnn.Param
	residual bool
	drop     gnn.Dropout
	x, a, h  *gnn.Tensor // input after dropout, pre-activation, ReLU output
	dx       *gnn.Tensor
	relu     bool
}

func newModel(orders, dim, hidden, layers, classes int, dropC, dropM float64) *model {
	m := &model{orders: orders, dim: dim, classes: classes, dropC: dropC}
	for k := 0; k <= orders; k++ {
		p := gnn.NewParam(fmt.Sprintf("coef.%d", k), 1, dim, true)
		m.coef = append(m.coef, p)
		m.params = append(m.params, p)
	}
	in := dim
	for l := 0; l < layers; l++ {
		out := hidden
		if l == layers-1 {
			out = classes
		}
		dl := &dense{
			w:        gnn.NewParam(fmt.Sprintf("dense.%d.W", l), in, out, true),
			b:        gnn.NewParam(fmt.Sprintf("dense.%d.b", l), 1, out, true),
			residual: in == out,
			drop:     gnn.Dropout{P: dropM},
			relu:     l < layers-1,
		}
		m.dense = append(m.dense, dl)
		m.mlp = append(m.mlp, dl.w, dl.b)
		in = out
	}
	m.params = append(m.params, m.mlp...)
	return m
}

// init sets c_k = 1/(K+1), the weights to U(−1/√out, 1/√out) (the authors'
// Dense.reset_parameters) and the biases to zero, from seed alone.
func (m *model) init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xfed65b))
	for _, c := range m.coef {
		for j := range c.W.Data {
			c.W.Data[j] = float32(1 / float64(m.orders+1))
		}
	}
	for _, dl := range m.dense {
		a := 1 / math.Sqrt(float64(dl.w.W.Cols))
		for j := range dl.w.W.Data {
			dl.w.W.Data[j] = float32((2*rng.Float64() - 1) * a)
		}
		dl.b.W.Zero()
	}
}

// forward returns the logits for the rows of inputs (K+1 tensors r×d, the
// same rows of each B_k). The result is owned by the model.
func (m *model) forward(inputs []*gnn.Tensor, train bool, rng *rand.Rand) *gnn.Tensor {
	r, d := inputs[0].Rows, m.dim
	m.inputs = inputs
	m.z = reuse(m.z, r, d)
	m.z.Zero()
	m.trainC = train && m.dropC > 0
	if m.trainC {
		m.seed = rng.Uint64()
	}
	for k, in := range inputs {
		m.combine(k, in, func(idx, j int, v float32) { m.z.Data[idx] += m.coef[k].W.Data[j] * v })
	}
	h := m.z
	for _, dl := range m.dense {
		dl.x = dl.drop.Forward(h, train, rng)
		dl.a = reuse(dl.a, r, dl.w.W.Cols)
		gnn.MatMul(dl.a, dl.x, dl.w.W)
		gnn.AddBias(dl.a, dl.b.W)
		if dl.residual {
			gnn.Add(dl.a, dl.a, dl.x)
		}
		h = dl.a
		if dl.relu {
			dl.h = reuse(dl.h, r, dl.w.W.Cols)
			gnn.ReLU(dl.h, dl.a)
			h = dl.h
		}
	}
	return h
}

// combine calls fn(index, column, value) for every entry of input k after
// dropout_C (kept entries scaled by 1/(1−p); dropped ones skipped). The
// mask is a function of the forward's seed and k alone, so backward
// regenerates it instead of storing K+1 masks of the inputs' size.
func (m *model) combine(k int, in *gnn.Tensor, fn func(idx, j int, v float32)) {
	d := m.dim
	if !m.trainC {
		for idx, v := range in.Data {
			fn(idx, idx%d, v)
		}
		return
	}
	th := uint32(m.dropC * (1 << 32))
	scale := float32(1 / (1 - m.dropC))
	s := splitMix(m.seed ^ (uint64(k+1) * 0x9e3779b97f4a7c15))
	for i := 0; i < in.Rows; i++ {
		row := in.Data[i*d : (i+1)*d]
		for j := 0; j < d; j += 2 {
			u := s.next()
			if uint32(u) >= th {
				fn(i*d+j, j, row[j]*scale)
			}
			if j+1 < d && uint32(u>>32) >= th {
				fn(i*d+j+1, j+1, row[j+1]*scale)
			}
		}
	}
}

// backward sets every parameter's gradient from dLogits, the gradient of
// the loss with respect to the last forward's logits (overwritten).
func (m *model) backward(dLogits *gnn.Tensor) {
	dA := dLogits
	for l := len(m.dense) - 1; l >= 0; l-- {
		dl := m.dense[l]
		gnn.MatMulTN(dl.w.G, dl.x, dA)
		dl.b.G.Zero()
		gnn.AddBiasGrad(dl.b.G, dA)
		dl.dx = reuse(dl.dx, dA.Rows, dl.w.W.Rows)
		gnn.MatMulNT(dl.dx, dA, dl.w.W)
		if dl.residual {
			gnn.Add(dl.dx, dl.dx, dA)
		}
		dl.drop.Backward(dl.dx, dl.dx)
		if l > 0 {
			prev := m.dense[l-1]
			gnn.ReLUBackward(dl.dx, dl.dx, prev.h)
		}
		dA = dl.dx
	}
	dz := dA // gradient with respect to z
	for k, in := range m.inputs {
		g := m.coef[k].G.Data
		clear(g)
		m.combine(k, in, func(idx, j int, v float32) { g[j] += dz.Data[idx] * v })
	}
}

// splitMix is SplitMix64 (Steele, Lea & Flood 2014), the dropout_C mask
// generator: cheap, and reproducible from one seed.
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// reuse returns t when it has shape r×c and a new tensor otherwise.
func reuse(t *gnn.Tensor, r, c int) *gnn.Tensor {
	if t != nil && t.Rows == r && t.Cols == c {
		return t
	}
	return gnn.New(r, c)
}
