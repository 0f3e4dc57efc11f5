package lpsfed

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// lowPass is the encoder of Eq. 3–4: L low-pass convolution layers over
// the client's Φ lowest-frequency eigenvectors P̄ and the pooling MLP over
// [Z⁽⁰⁾, …, Z⁽ᴸ⁾]. Its first affine map W = [W₀; W₁; …; W_L] is applied
// in the spectral domain,
//
//	[Z⁽⁰⁾, …, Z⁽ᴸ⁾]·W = E·W₀ + P̄·C,  C = Σ_l diag(κ_l)·A·W_l  (Φ×h),
//
// which is exact because every Z⁽ˡ⁾ (l ≥ 1) is P̄ times Φ×d coefficients,
// and lets a batch use only its rows of E and P̄. The only full-size work
// per step is A = P̄ᵀE forward and P̄·dA backward.
type lowPass struct {
	d, phi, layers, hidden int
	P                      *gnn.Tensor  // n×Φ, P̄ (not learnable)
	E                      *gnn.Param   // n×d node embeddings (local)
	K                      []*gnn.Param // L kernels k⁽ˡ⁾, 1×Φ (local)
	W1, B1                 *gnn.Param   // (L+1)d×h1 and 1×h1, h1 = hidden or d (shared)
	W2, B2                 *gnn.Param   // h×d and 1×d when hidden > 0 (shared), else nil

	rows   []int32       // nodes of the last forward; nil: all
	a      *gnn.Tensor   // A = P̄ᵀE, Φ×d
	kappa  [][]float32   // κ_l = k⁽¹⁾⊙…⊙k⁽ˡ⁾, L of Φ
	bl     []*gnn.Tensor // B_l = diag(κ_l)·A, L of Φ×d
	c      *gnn.Tensor   // Φ×h1
	es, ps *gnn.Tensor   // gathered rows of E (s×d) and P̄ (s×Φ)
	h1     *gnn.Tensor   // s×h1: tanh of the first map when hidden > 0
	out    *gnn.Tensor   // s×d: Z rows

	esBuf, psBuf, h1Pre, dPre, dH1, dES, dC, dBl, dA, full *gnn.Tensor
	ws1, ws2, ws3                                          *gnn.Tensor
	dKappa                                                 [][]float32
}

func newLowPass(p *gnn.Tensor, d, layers, hidden int, rng *rand.Rand, std float64) (*lowPass, error) {
	if p == nil || p.Rows < 1 || p.Cols < 1 {
		return nil, fmt.Errorf("lpsfed: low-pass encoder: no eigenvectors")
	}
	h1 := d
	if hidden > 0 {
		h1 = hidden
	}
	lp := &lowPass{d: d, phi: p.Cols, layers: layers, hidden: hidden, P: p,
		E:  gnn.NewParam("emb", p.Rows, d, true),
		W1: gnn.NewParam("pool.w1", (layers+1)*d, h1, true),
		B1: gnn.NewParam("pool.b1", 1, h1, false),
	}
	normalFill(lp.E.W, std, rng)
	for l := range layers {
		k := gnn.NewParam(fmt.Sprintf("kernel%d", l+1), 1, p.Cols, false)
		// All-pass start: every layer begins as the low-pass projection
		// P̄P̄ᵀ itself, and learns to reweight frequencies from there.
		for i := range k.W.Data {
			k.W.Data[i] = 1
		}
		lp.K = append(lp.K, k)
	}
	if hidden > 0 {
		lp.W2 = gnn.NewParam("pool.w2", hidden, d, true)
		lp.B2 = gnn.NewParam("pool.b2", 1, d, false)
	}
	lp.kappa = make([][]float32, layers)
	lp.dKappa = make([][]float32, layers)
	lp.bl = make([]*gnn.Tensor, layers)
	for l := range layers {
		lp.kappa[l] = make([]float32, p.Cols)
		lp.dKappa[l] = make([]float32, p.Cols)
		lp.bl[l] = gnn.New(p.Cols, d)
	}
	return lp, nil
}

// shared returns the pooling MLP's parameters, which are federated.
func (lp *lowPass) shared() []*gnn.Param {
	if lp.W2 == nil {
		return []*gnn.Param{lp.W1, lp.B1}
	}
	return []*gnn.Param{lp.W1, lp.B1, lp.W2, lp.B2}
}

// local returns the parameters that never leave the client.
func (lp *lowPass) local() []*gnn.Param { return append([]*gnn.Param{lp.E}, lp.K...) }

// initShared draws the pooling MLP from rng (Glorot weights, zero biases).
func (lp *lowPass) initShared(rng *rand.Rand) {
	for _, p := range lp.shared() {
		if p.W.Rows == 1 {
			p.W.Zero()
		} else {
			p.Glorot(rng)
		}
	}
}

// block returns rows [l·d, (l+1)·d) of t: the part of the first pooling
// map acting on Z⁽ˡ⁾.
func (lp *lowPass) block(t *gnn.Tensor, l int) *gnn.Tensor { return t.Slice(l*lp.d, (l+1)*lp.d) }

// forward computes the pooled embeddings Z of the given nodes (nil: all
// n nodes), len(rows)×d, valid until the next forward.
func (lp *lowPass) forward(rows []int32) *gnn.Tensor {
	d, phi := lp.d, lp.phi
	h1 := lp.W1.W.Cols
	lp.rows = rows
	lp.a = buf(&lp.a, phi, d)
	gnn.MatMulTN(lp.a, lp.P, lp.E.W)
	c := buf(&lp.c, phi, h1)
	c.Zero()
	for l := range lp.layers {
		kap := lp.kappa[l]
		for i, k := range lp.K[l].W.Data {
			if l == 0 {
				kap[i] = k
			} else {
				kap[i] = lp.kappa[l-1][i] * k
			}
		}
		b := lp.bl[l]
		for i := range phi {
			row, src := b.Data[i*d:(i+1)*d], lp.a.Data[i*d:(i+1)*d]
			for j, v := range src {
				row[j] = kap[i] * v
			}
		}
		addMatMul(c, b, lp.block(lp.W1.W, l+1), &lp.ws1)
	}
	if rows == nil {
		lp.es, lp.ps = lp.E.W, lp.P
	} else {
		lp.es = buf(&lp.esBuf, len(rows), d)
		lp.ps = buf(&lp.psBuf, len(rows), phi)
		gatherRows(lp.es, lp.E.W, rows)
		gatherRows(lp.ps, lp.P, rows)
	}
	s := lp.es.Rows
	pre := buf(&lp.h1Pre, s, h1)
	gnn.MatMul(pre, lp.es, lp.block(lp.W1.W, 0))
	addMatMul(pre, lp.ps, c, &lp.ws2)
	gnn.AddBias(pre, lp.B1.W)
	tanhInPlace(pre)
	if lp.W2 == nil {
		lp.out = pre
		return lp.out
	}
	lp.h1 = pre
	lp.out = buf(&lp.full, s, d)
	gnn.MatMul(lp.out, lp.h1, lp.W2.W)
	gnn.AddBias(lp.out, lp.B2.W)
	tanhInPlace(lp.out)
	return lp.out
}

// backward accumulates the gradients of every parameter from dOut, the
// gradient of the loss with respect to the last forward's output. dOut
// is overwritten.
func (lp *lowPass) backward(dOut *gnn.Tensor) {
	d, phi := lp.d, lp.phi
	h1 := lp.W1.W.Cols
	s := lp.es.Rows
	dPre := buf(&lp.dPre, s, h1)
	if lp.W2 == nil {
		tanhBackward(dPre, dOut, lp.out)
	} else {
		tanhBackward(dOut, dOut, lp.out)
		addMatMulTN(lp.W2.G, lp.h1, dOut, &lp.ws1)
		gnn.AddBiasGrad(lp.B2.G, dOut)
		dH1 := buf(&lp.dH1, s, h1)
		gnn.MatMulNT(dH1, dOut, lp.W2.W)
		tanhBackward(dPre, dH1, lp.h1)
	}
	gnn.AddBiasGrad(lp.B1.G, dPre)
	addMatMulTN(lp.block(lp.W1.G, 0), lp.es, dPre, &lp.ws2)
	dES := buf(&lp.dES, s, d)
	gnn.MatMulNT(dES, dPre, lp.block(lp.W1.W, 0))
	dC := buf(&lp.dC, phi, h1)
	gnn.MatMulTN(dC, lp.ps, dPre)
	dA := buf(&lp.dA, phi, d)
	dA.Zero()
	dBl := buf(&lp.dBl, phi, d)
	for l := range lp.layers {
		addMatMulTN(lp.block(lp.W1.G, l+1), lp.bl[l], dC, &lp.ws2)
		gnn.MatMulNT(dBl, dC, lp.block(lp.W1.W, l+1))
		kap, dk := lp.kappa[l], lp.dKappa[l]
		for i := range phi {
			g, a, da := dBl.Data[i*d:(i+1)*d], lp.a.Data[i*d:(i+1)*d], dA.Data[i*d:(i+1)*d]
			var acc float32
			for j, v := range g {
				acc += v * a[j]
				da[j] += kap[i] * v
			}
			dk[i] = acc
		}
	}
	// κ_l = Π_{m≤l} k⁽ᵐ⁾: dk⁽ᵐ⁾ = Σ_{l≥m} dκ_l · Π_{m'≤l, m'≠m} k⁽ᵐ'⁾,
	// multiplied out rather than divided, so that a zero kernel entry is
	// harmless.
	for m := range lp.layers {
		g := lp.K[m].G.Data
		for i := range phi {
			var acc float32
			for l := m; l < lp.layers; l++ {
				prod := lp.dKappa[l][i]
				for mm := 0; mm <= l; mm++ {
					if mm != m {
						prod *= lp.K[mm].W.Data[i]
					}
				}
				acc += prod
			}
			g[i] += acc
		}
	}
	if lp.rows == nil {
		gnn.AddScaled(lp.E.G, 1, dES)
	} else {
		scatterAddRows(lp.E.G, dES, lp.rows)
	}
	addMatMul(lp.E.G, lp.P, dA, &lp.ws3)
}

// Small dense helpers the layers share. Shapes are checked by the gnn
// kernels they call; these helpers are only used on shapes the layers
// built themselves.

// buf returns *t when it already is r×c and a new zeroed tensor otherwise,
// keeping layer workspaces across steps. Contents are not cleared.
func buf(t **gnn.Tensor, r, c int) *gnn.Tensor {
	if *t == nil || (*t).Rows != r || (*t).Cols != c {
		*t = gnn.New(r, c)
	}
	return *t
}

// gatherRows sets dst (len(rows)×src.Cols) to the rows of src.
func gatherRows(dst, src *gnn.Tensor, rows []int32) {
	c := src.Cols
	for k, r := range rows {
		copy(dst.Data[k*c:(k+1)*c], src.Data[int(r)*c:(int(r)+1)*c])
	}
}

// scatterAddRows adds row k of src to row rows[k] of dst.
func scatterAddRows(dst, src *gnn.Tensor, rows []int32) {
	c := src.Cols
	for k, r := range rows {
		d := dst.Data[int(r)*c : (int(r)+1)*c]
		for j, v := range src.Data[k*c : (k+1)*c] {
			d[j] += v
		}
	}
}

// tanhInPlace applies tanh elementwise, split across cores (a Gowalla
// client's whole-graph forward takes two million).
func tanhInPlace(t *gnn.Tensor) {
	parallelFor(len(t.Data), parts(len(t.Data), 16), func(lo, hi int) {
		x := t.Data[lo:hi]
		for i, v := range x {
			x[i] = float32(math.Tanh(float64(v)))
		}
	})
}

// tanhBackward sets dPre = dOut ⊙ (1 - out²), out = tanh(pre); dPre may
// alias dOut.
func tanhBackward(dPre, dOut, out *gnn.Tensor) {
	parallelFor(len(out.Data), parts(len(out.Data), 2), func(lo, hi int) {
		d, g := dPre.Data[lo:hi], dOut.Data[lo:hi]
		for i, y := range out.Data[lo:hi] {
			d[i] = g[i] * (1 - y*y)
		}
	})
}

// addMatMulTN sets g += aᵀ·b through the workspace ws.
func addMatMulTN(g, a, b *gnn.Tensor, ws **gnn.Tensor) {
	t := buf(ws, g.Rows, g.Cols)
	gnn.MatMulTN(t, a, b)
	gnn.AddScaled(g, 1, t)
}

// addMatMul sets g += a·b through the workspace ws.
func addMatMul(g, a, b *gnn.Tensor, ws **gnn.Tensor) {
	t := buf(ws, g.Rows, g.Cols)
	gnn.MatMul(t, a, b)
	gnn.AddScaled(g, 1, t)
}

// addMatMulNT sets g += a·bᵀ through the workspace ws.
func addMatMulNT(g, a, b *gnn.Tensor, ws **gnn.Tensor) {
	t := buf(ws, g.Rows, g.Cols)
	gnn.MatMulNT(t, a, b)
	gnn.AddScaled(g, 1, t)
}

// normalFill fills t with N(0, std²) values.
func normalFill(t *gnn.Tensor, std float64, rng interface{ NormFloat64() float64 }) {
	for i := range t.Data {
		t.Data[i] = float32(std * rng.NormFloat64())
	}
}
