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
// B_k), so training touches the training rows only. Unless built without
// biases (Config.NoBias: the authors' bias-free Dense, bias='none'), every
// layer has a bias (zero at Init); the coefficients come first in the
// parameter list, as the contract's flat layout requires.
type model struct {
	orders, dim, classes int
	dropC                float64
	coef                 []*gnn.Param // K+1 params, 1×d each
	dense                []*dense
	dropM                float64
	params, mlp          []*gnn.Param
}

// dense is one Dense layer; b is nil in a bias-free model.
type dense struct {
	w, b     *gnn.Param
	residual bool
	relu     bool
}

// workspace is the state of one forward pass, kept for its backward, and
// the buffers it reuses: the learner keeps one per split so that the
// training, validation and test passes (different row counts) never
// reallocate.
type workspace struct {
	inputs []*gnn.Tensor
	z      *gnn.Tensor
	seed   uint64 // dropout_C mask seed of the last training forward
	trainC bool
	layers []layerState
}

// layerState is one Dense layer's pass: its input dropout, the input after
// dropout, the pre-activation, the ReLU output and the input gradient.
type layerState struct {
	drop    gnn.Dropout
	x, a, h *gnn.Tensor
	dx      *gnn.Tensor
}

// newWorkspace returns an empty workspace for m.
func (m *model) newWorkspace() *workspace {
	ws := &workspace{layers: make([]layerState, len(m.dense))}
	for l := range ws.layers {
		ws.layers[l].drop.P = m.dropM
	}
	return ws
}

// newModel builds the model, its Dense layers with biases or without.
func newModel(orders, dim, hidden, layers, classes int, dropC, dropM float64, bias bool) *model {
	m := &model{orders: orders, dim: dim, classes: classes, dropC: dropC, dropM: dropM}
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
			residual: in == out,
			relu:     l < layers-1,
		}
		m.dense = append(m.dense, dl)
		m.mlp = append(m.mlp, dl.w)
		if bias {
			dl.b = gnn.NewParam(fmt.Sprintf("dense.%d.b", l), 1, out, true)
			m.mlp = append(m.mlp, dl.b)
		}
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
		if dl.b != nil {
			dl.b.W.Zero()
		}
	}
}

// forward returns the logits for the rows of inputs (K+1 tensors r×d, the
// same rows of each B_k), computed in ws, which owns the result.
func (m *model) forward(ws *workspace, inputs []*gnn.Tensor, train bool, rng *rand.Rand) *gnn.Tensor {
	r, d := inputs[0].Rows, m.dim
	ws.inputs = inputs
	ws.z = gnn.Reuse(ws.z, r, d)
	ws.z.Zero()
	ws.trainC = train && m.dropC > 0
	if ws.trainC {
		ws.seed = rng.Uint64()
	}
	for k, in := range inputs {
		m.combine(ws, k, in, ws.z.Data, nil)
	}
	h := ws.z
	for l, dl := range m.dense {
		st := &ws.layers[l]
		st.x = st.drop.Forward(h, train, rng)
		st.a = gnn.Reuse(st.a, r, dl.w.W.Cols)
		gnn.MatMul(st.a, st.x, dl.w.W)
		if dl.b != nil {
			gnn.AddBias(st.a, dl.b.W)
		}
		if dl.residual {
			gnn.Add(st.a, st.a, st.x)
		}
		h = st.a
		if dl.relu {
			st.h = gnn.Reuse(st.h, r, dl.w.W.Cols)
			gnn.ReLU(st.h, st.a)
			h = st.h
		}
	}
	return h
}

// combine runs one order k of the combination over the entries of input k
// after dropout_C (kept entries scaled by 1/(1−p)): forward (z != nil)
// adds c_k ⊙ B̃_k to z; backward (grad != nil, dz in z's place) adds
// Σ_rows dz ⊙ B̃_k to c_k's gradient. The mask is a function of the pass's
// seed and k alone, so backward regenerates it instead of storing K+1 masks
// of the inputs' size.
func (m *model) combine(ws *workspace, k int, in *gnn.Tensor, z []float32, grad []float32) {
	d := m.dim
	c := m.coef[k].W.Data[:d]
	scale := float32(1)
	th := uint32(0)
	var s gnn.SplitMix
	if ws.trainC {
		scale = float32(1 / (1 - m.dropC))
		th = uint32(m.dropC * (1 << 32))
		s = gnn.SplitMix(ws.seed ^ (uint64(k+1) * 0x9e3779b97f4a7c15))
	}
	for i := 0; i < in.Rows; i++ {
		row := in.Data[i*d : (i+1)*d]
		zr := z[i*d : (i+1)*d]
		if !ws.trainC {
			if grad == nil {
				for j, v := range row {
					zr[j] += c[j] * v
				}
			} else {
				for j, v := range row {
					grad[j] += zr[j] * v
				}
			}
			continue
		}
		for j := 0; j < d; j += 2 {
			u := s.Next()
			v0 := row[j] * scale
			if uint32(u) < th {
				v0 = 0
			}
			if grad == nil {
				zr[j] += c[j] * v0
			} else {
				grad[j] += zr[j] * v0
			}
			if j+1 < d {
				v1 := row[j+1] * scale
				if uint32(u>>32) < th {
					v1 = 0
				}
				if grad == nil {
					zr[j+1] += c[j+1] * v1
				} else {
					grad[j+1] += zr[j+1] * v1
				}
			}
		}
	}
}

// backward sets every parameter's gradient from dLogits, the gradient of
// the loss with respect to the logits of ws's last forward (overwritten).
func (m *model) backward(ws *workspace, dLogits *gnn.Tensor) {
	dA := dLogits
	for l := len(m.dense) - 1; l >= 0; l-- {
		dl, st := m.dense[l], &ws.layers[l]
		gnn.MatMulTN(dl.w.G, st.x, dA)
		if dl.b != nil {
			dl.b.G.Zero()
			gnn.AddBiasGrad(dl.b.G, dA)
		}
		st.dx = gnn.Reuse(st.dx, dA.Rows, dl.w.W.Rows)
		gnn.MatMulNT(st.dx, dA, dl.w.W)
		if dl.residual {
			gnn.Add(st.dx, st.dx, dA)
		}
		st.drop.Backward(st.dx, st.dx)
		if l > 0 {
			gnn.ReLUBackward(st.dx, st.dx, ws.layers[l-1].h)
		}
		dA = st.dx
	}
	for k, in := range ws.inputs { // dA is now the gradient with respect to z
		g := m.coef[k].G.Data
		clear(g)
		m.combine(ws, k, in, dA.Data, g)
	}
}
