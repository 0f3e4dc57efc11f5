package edgegnn

import "graphfed/gnn"

// KindGIN names the GIN aggregation (Xu et al. 2019) of the edge model:
// sum aggregation and a two-layer MLP update, (1+ε)·self with learnable ε.
const KindGIN = "gin"

// ginForward completes the GIN node update from the projected message sum
// m (nt×H, the message projection's output, which nothing reads after
// this): inner = (1+ε)·hPrev[:nt] + m, formed in m's storage (a copy of
// it cost a pass over nt×H for nothing; backward reads the projection's
// input, not its output), then Z = MLP(inner) = ReLU(inner·W1 + b1)·W2 +
// b2. It returns Z (owned by the second MLP layer).
func (l *edgeLayer) ginForward(m, hPrev *gnn.Tensor, nt int) *gnn.Tensor {
	l.inner = m
	edgeAddScaled(l.inner, 1+l.eps.W.Data[0], hPrev.Slice(0, nt))
	a := l.mlp1.forward(l.inner)
	l.r = edgeReuse(l.r, nt, l.hidden)
	edgeReLU(l.r, a)
	return l.mlp2.forward(l.r)
}

// ginBackward back-propagates dZ through the MLP, accumulates the MLP's
// and ε's gradients, adds (1+ε)·dInner into the self rows of l.dhPrev
// (which must be zeroed first) and returns dInner, the gradient w.r.t. the
// projected message sum.
func (l *edgeLayer) ginBackward(dZ *gnn.Tensor, nt int) *gnn.Tensor {
	dr := l.mlp2.backward(dZ, true)
	l.da = edgeReuse(l.da, nt, l.hidden)
	gnn.ReLUBackward(l.da, dr, l.r)
	dInner := l.mlp1.backward(l.da, true)
	self := l.hPrev.Slice(0, nt)
	var de float64
	for i, g := range dInner.Data {
		de += float64(g) * float64(self.Data[i])
	}
	l.eps.G.Data[0] += float32(de)
	edgeAddScaled(l.dhPrev.Slice(0, nt), 1+l.eps.W.Data[0], dInner)
	return dInner
}
