package gnn

import "math/rand/v2"

// GCNLayer is a graph convolution (Kipf & Welling 2017):
//
//	out = P·x·W + b
//
// with P the normalized adjacency Â = D^-1/2 (A+I) D^-1/2 (NewInput builds
// it), W In×Out and b 1×Out. The product is evaluated as P·(x·W) when x is
// sparse or In ≥ Out, and as (P·x)·W otherwise, so that the propagation
// always runs on the narrower matrix.
type GCNLayer struct {
	W, B *Param

	// State of the last Forward.
	prop     *Sparse
	x        Features
	aggFirst bool
	// Buffers reused across calls.
	xw, ax, out  *Tensor // x·W (Ns×Out), P·x (Nt×In), output (Nt×Out)
	dxw, dax, dx *Tensor
	gw           *Tensor
	ws           []float32 // kernel workspace
}

// NewGCNLayer returns an in→out GCN layer with Glorot-initialised W and zero
// b, its parameters named name+".W" and name+".b". decay sets W's Decay.
func NewGCNLayer(name string, in, out int, decay bool, rng *rand.Rand) *GCNLayer {
	l := &GCNLayer{W: NewParam(name+".W", in, out, decay), B: NewParam(name+".b", 1, out, false)}
	l.W.Glorot(rng)
	return l
}

// Dims returns (In, Out).
func (l *GCNLayer) Dims() (int, int) { return l.W.W.Rows, l.W.W.Cols }

// Params returns [W, b].
func (l *GCNLayer) Params() []*Param { return []*Param{l.W, l.B} }

// Forward computes P·x·W + b (prop.Rows()×Out).
func (l *GCNLayer) Forward(prop *Sparse, x Features) *Tensor {
	in, out := l.Dims()
	checkLayerInput("gcn forward", prop, x, in)
	l.prop, l.x = prop, x
	nt, ns := prop.Rows(), prop.Cols()
	l.out = Reuse(l.out, nt, out)
	l.aggFirst = x.Dense != nil && in < out
	if l.aggFirst {
		l.ax = Reuse(l.ax, nt, in)
		prop.Mul(l.ax, x.Dense)
		MatMul(l.out, l.ax, l.W.W)
	} else {
		l.xw = Reuse(l.xw, ns, out)
		x.mul(l.xw, l.W.W)
		prop.Mul(l.out, l.xw)
	}
	AddBias(l.out, l.B.W)
	return l.out
}

// Backward accumulates dW and db and returns dx (nil for sparse x).
func (l *GCNLayer) Backward(dOut *Tensor) *Tensor {
	in, out := l.Dims()
	nt, ns := l.prop.Rows(), l.prop.Cols()
	if dOut.Rows != nt || dOut.Cols != out {
		ShapePanic("gcn backward", "gradient %dx%d for output %dx%d", dOut.Rows, dOut.Cols, nt, out)
	}
	AddBiasGrad(l.B.G, dOut)
	l.gw = Reuse(l.gw, in, out)
	if l.aggFirst {
		// out = ax·W, ax = P·x.
		MatMulTN(l.gw, l.ax, dOut)
		Add(l.W.G, l.W.G, l.gw)
		l.dax = Reuse(l.dax, nt, in)
		MatMulNTWork(l.dax, dOut, l.W.W, &l.ws)
		l.dx = Reuse(l.dx, ns, in)
		l.prop.mulT(l.dx, l.dax, &l.ws)
		return l.dx
	}
	// out = P·xw, xw = x·W.
	l.dxw = Reuse(l.dxw, ns, out)
	l.prop.mulT(l.dxw, dOut, &l.ws)
	l.x.mulT(l.gw, l.dxw, &l.ws)
	Add(l.W.G, l.W.G, l.gw)
	if l.x.Dense == nil {
		return nil
	}
	l.dx = Reuse(l.dx, ns, in)
	MatMulNTWork(l.dx, l.dxw, l.W.W, &l.ws)
	return l.dx
}
