package cefedgnn

import (
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// cefedNet is CE-FedGNN's node-classification network (seed §3.2, Eq. 5):
// two GraphSAGE-mean layers, the moving-average estimator on the first
// layer's pre-activation, and an L2-normalized hidden layer, so that local
// hidden embeddings live on the unit sphere like the released (normalized,
// noised) ones they are averaged with. For N local nodes, F features, H
// hidden units, C classes and M cross-client neighbours:
//
//	Z1     = X·W1_self + (P_loc·X)·W1_neigh + b1             N×H
//	H̃1     = (1−γ)·H̃1_prev + γ·Z1                            N×H
//	H1     = normalize(relu(H̃1))                             N×H
//	logits = H1·W2_self + (P·drop([H1; R]))·W2_neigh + b2    N×C
//
// (dropout acts on the layer-2 input, self rows included). Layer 1
// aggregates local neighbours only (P_loc, N×N): remote raw features are
// private. R (M×H) holds the embeddings received for the cross-client
// neighbours and P (N×(N+M)) is the mean over the local neighbours and
// the remote ones whose embedding has arrived.
//
// Backward treats the history (1−γ)·H̃1_prev and the rows of R as
// constants: the gradient reaches layer 1 through the fresh term only, so
// dZ1 = γ·dH̃1, and each client back-propagates through its own nodes
// only. Without a history (the first step after Init) H̃1 = Z1 and the
// factor is 1.
type cefedNet struct {
	l1, l2 *gnn.SAGELayer
	drop   gnn.Dropout

	// State of the last forward, for backward.
	gamma float32     // factor of Z1 in H̃1 (1 without a history)
	ht    *gnn.Tensor // N×H, H̃1
	h1    *gnn.Tensor // N×H, H1
	norm  []float32   // N, ‖relu(H̃1(v))‖ (0 for a row that relu zeroed)
	hx    *gnn.Tensor // (N+M)×H, [H1; R]
	// Backward buffers.
	dr, dht *gnn.Tensor // N×H
}

// minNorm is the norm below which a hidden row counts as zero: it is
// mapped to the zero vector (not the sphere) and passes no gradient.
const minNorm = 1e-12

// newCEFedNet builds the network with Glorot weights drawn from rng, in a
// fixed order, so equal seeds give equal parameters on every client. Both
// layers' weights take weight decay; biases do not.
func newCEFedNet(features, hidden, classes int, dropout float64, rng *rand.Rand) *cefedNet {
	return &cefedNet{
		l1:   gnn.NewSAGELayer("cefed.sage1", features, hidden, true, rng),
		l2:   gnn.NewSAGELayer("cefed.sage2", hidden, classes, true, rng),
		drop: gnn.Dropout{P: dropout},
	}
}

// params lists [W1_self, W1_neigh, b1, W2_self, W2_neigh, b2]: the order
// of the flat vectors and of the schema hash.
func (m *cefedNet) params() []*gnn.Param {
	return append(m.l1.Params(), m.l2.Params()...)
}

// forward computes the logits (N×C, owned by layer 2) and keeps what
// backward needs. x is N×F, local the N×N local mean, prop the N×(N+M)
// layer-2 mean and remote the M×H received rows; prev is H̃1_prev (N×H)
// or nil for none. Dropout draws from rng when train is set.
func (m *cefedNet) forward(x, local, prop *gnn.Sparse, remote, prev *gnn.Tensor, gamma float64, train bool, rng *rand.Rand) *gnn.Tensor {
	n := x.Rows()
	_, hidden := m.l1.Dims()
	z1 := m.l1.Forward(local, gnn.SparseFeatures(x)) // N×H
	m.ht = gnn.Reuse(m.ht, n, hidden)
	if prev == nil {
		m.gamma = 1
		m.ht.Copy(z1)
	} else {
		m.gamma = float32(gamma)
		g, keep := float32(gamma), float32(1-gamma)
		for i, z := range z1.Data {
			m.ht.Data[i] = keep*prev.Data[i] + g*z
		}
	}
	m.h1 = gnn.Reuse(m.h1, n, hidden)
	gnn.ReLU(m.h1, m.ht)
	if cap(m.norm) < n {
		m.norm = make([]float32, n)
	}
	m.norm = m.norm[:n]
	normalizeRows(m.h1, m.norm)

	m.hx = gnn.Reuse(m.hx, n+remote.Rows, hidden)
	copy(m.hx.Data, m.h1.Data)
	copy(m.hx.Data[len(m.h1.Data):], remote.Data)
	hd := m.drop.Forward(m.hx, train, rng)           // (N+M)×H
	return m.l2.Forward(prop, gnn.DenseFeatures(hd)) // N×C
}

// backward takes dLogits (N×C) and adds every parameter's gradient into
// its Param.G.
func (m *cefedNet) backward(dLogits *gnn.Tensor) {
	dhd := m.l2.Backward(dLogits) // (N+M)×H, owned by layer 2
	m.drop.Backward(dhd, dhd)
	n, hidden := m.h1.Rows, m.h1.Cols
	dh1 := dhd.Slice(0, n) // N×H; the remote rows are constants
	m.dr = gnn.Reuse(m.dr, n, hidden)
	normalizeRowsBackward(m.dr, dh1, m.h1, m.norm)
	m.dht = gnn.Reuse(m.dht, n, hidden)
	gnn.ReLUBackward(m.dht, m.dr, m.h1) // h1 > 0 exactly where H̃1 > 0
	if m.gamma != 1 {
		m.dht.Scale(m.gamma) // dZ1 = γ·dH̃1
	}
	m.l1.Backward(m.dht)
}

// normalizeRows scales every row of t (N×H) to unit L2 norm in place and
// records the original norms in norm (len N). A row whose norm is below
// minNorm becomes zero and records 0.
func normalizeRows(t *gnn.Tensor, norm []float32) {
	for i := range t.Rows {
		row := t.Row(i)
		var s float64
		for _, v := range row {
			s += float64(v) * float64(v)
		}
		nv := math.Sqrt(s)
		if nv < minNorm {
			clear(row)
			norm[i] = 0
			continue
		}
		inv := float32(1 / nv)
		for j := range row {
			row[j] *= inv
		}
		norm[i] = float32(nv)
	}
}

// normalizeRowsBackward sets dx (N×H) to the gradient through y = r/‖r‖
// given dy (N×H), the output y and the norms ‖r‖:
//
//	dr = (dy − y·(y·dy)) / ‖r‖
//
// and 0 for rows whose norm was 0.
func normalizeRowsBackward(dx, dy, y *gnn.Tensor, norm []float32) {
	for i := range y.Rows {
		d := dx.Row(i)
		if norm[i] == 0 {
			clear(d)
			continue
		}
		yr, g := y.Row(i), dy.Row(i)
		var dot float64
		for j, v := range yr {
			dot += float64(v) * float64(g[j])
		}
		inv := 1 / norm[i]
		for j, v := range yr {
			d[j] = (g[j] - v*float32(dot)) * inv
		}
	}
}
