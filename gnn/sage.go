package gnn

import "math/rand/v2"

// SAGELayer is a GraphSAGE layer with mean aggregation (Hamilton et al.
// 2017):
//
//	out_i = x_i·W_self + (mean_{j ∈ N(i)} x_j)·W_neigh + b
//
// with the mean taken by P = D⁻¹A (NewInput builds it; a node without
// neighbours gets a zero mean), W_self and W_neigh In×Out and b 1×Out. The
// neighbour term is evaluated as P·(x·W_neigh) when x is sparse or
// In ≥ Out and as (P·x)·W_neigh otherwise.
type SAGELayer struct {
	WSelf, WNeigh, B *Param

	// State of the last Forward.
	prop     *Sparse
	x        Features
	aggFirst bool
	// Buffers reused across calls.
	out, xn, ax *Tensor // output; x·W_neigh (Ns×Out) or (P·x)·W_neigh; P·x (Nt×In) or P·xn
	dxn, dax    *Tensor
	dx, dxs, gw *Tensor
	dOutPad     *Tensor
	ws          []float32 // kernel workspace
}

// NewSAGELayer returns an in→out GraphSAGE-mean layer with Glorot-initialised
// weights and zero bias, its parameters named name+".W_self",
// name+".W_neigh" and name+".b". decay sets the weights' Decay.
func NewSAGELayer(name string, in, out int, decay bool, rng *rand.Rand) *SAGELayer {
	l := &SAGELayer{
		WSelf:  NewParam(name+".W_self", in, out, decay),
		WNeigh: NewParam(name+".W_neigh", in, out, decay),
		B:      NewParam(name+".b", 1, out, false),
	}
	l.WSelf.Glorot(rng)
	l.WNeigh.Glorot(rng)
	return l
}

// Dims returns (In, Out).
func (l *SAGELayer) Dims() (int, int) { return l.WSelf.W.Rows, l.WSelf.W.Cols }

// Params returns [W_self, W_neigh, b].
func (l *SAGELayer) Params() []*Param { return []*Param{l.WSelf, l.WNeigh, l.B} }

// Forward computes x[:Nt]·W_self + P·x·W_neigh + b (prop.Rows()×Out).
func (l *SAGELayer) Forward(prop *Sparse, x Features) *Tensor {
	in, out := l.Dims()
	checkLayerInput("sage forward", prop, x, in)
	l.prop, l.x = prop, x
	nt, ns := prop.Rows(), prop.Cols()
	l.out = Reuse(l.out, nt, out)
	x.mul(l.out, l.WSelf.W)
	l.aggFirst = x.Dense != nil && in < out
	if l.aggFirst {
		l.ax = Reuse(l.ax, nt, in)
		prop.Mul(l.ax, x.Dense)
		l.xn = Reuse(l.xn, nt, out)
		MatMul(l.xn, l.ax, l.WNeigh.W)
		Add(l.out, l.out, l.xn)
	} else {
		l.xn = Reuse(l.xn, ns, out)
		x.mul(l.xn, l.WNeigh.W)
		l.ax = Reuse(l.ax, nt, out) // P·xn
		prop.Mul(l.ax, l.xn)
		Add(l.out, l.out, l.ax)
	}
	AddBias(l.out, l.B.W)
	return l.out
}

// Backward accumulates the weight and bias gradients and returns dx (nil
// for sparse x).
func (l *SAGELayer) Backward(dOut *Tensor) *Tensor {
	in, out := l.Dims()
	nt, ns := l.prop.Rows(), l.prop.Cols()
	if dOut.Rows != nt || dOut.Cols != out {
		ShapePanic("sage backward", "gradient %dx%d for output %dx%d", dOut.Rows, dOut.Cols, nt, out)
	}
	dense := l.x.Dense != nil
	AddBiasGrad(l.B.G, dOut)
	l.gw = Reuse(l.gw, in, out)

	// Self term: out += x[:Nt]·W_self. Padding dOut with zero rows for
	// the non-target sources gives dW_self = xᵀ·pad(dOut).
	padded := padRows(&l.dOutPad, dOut, ns)
	l.x.mulT(l.gw, padded, &l.ws)
	Add(l.WSelf.G, l.WSelf.G, l.gw)
	if dense {
		l.dx = Reuse(l.dx, ns, in)
		MatMulNTWork(l.dx, padded, l.WSelf.W, &l.ws)
	}

	// Neighbour term.
	if l.aggFirst {
		// out += ax·W_neigh, ax = P·x.
		MatMulTN(l.gw, l.ax, dOut)
		Add(l.WNeigh.G, l.WNeigh.G, l.gw)
		l.dax = Reuse(l.dax, nt, in)
		MatMulNTWork(l.dax, dOut, l.WNeigh.W, &l.ws)
		l.dxs = Reuse(l.dxs, ns, in)
		l.prop.mulT(l.dxs, l.dax, &l.ws)
		Add(l.dx, l.dx, l.dxs)
		return l.dx
	}
	// out += P·xn, xn = x·W_neigh.
	l.dxn = Reuse(l.dxn, ns, out)
	l.prop.mulT(l.dxn, dOut, &l.ws)
	l.x.mulT(l.gw, l.dxn, &l.ws)
	Add(l.WNeigh.G, l.WNeigh.G, l.gw)
	if !dense {
		return nil
	}
	l.dxs = Reuse(l.dxs, ns, in)
	MatMulNTWork(l.dxs, l.dxn, l.WNeigh.W, &l.ws)
	Add(l.dx, l.dx, l.dxs)
	return l.dx
}
