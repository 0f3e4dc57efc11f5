package edgegnn

import (
	"math/rand/v2"

	"graphfed/gnn"
)

// edgeUpdate is the residual edge update of an edge layer,
//
//	e'_k = e_k + ReLU([h_src(k) | h_dst(k) | e_k]·U + c)
//
// for the first ne edges of a batch, U 3H×H stacked as [U_src; U_dst; U_e]
// and c 1×H. The endpoint terms are projected once per node, h·U_src and
// h·U_dst, and gathered per edge (and their gradients scattered to nodes
// before the weight products), so the node part costs nodes·H² rather
// than edges·H²: a batch has several times more edges than nodes.
type edgeUpdate struct {
	W, B   *gnn.Param
	hidden int

	// State of the last forward.
	h, ePrev       *gnn.Tensor // node embeddings; edge inputs (first ne rows used)
	src, dst       []int32
	ne             int
	hs, hd, u, out *gnn.Tensor // h·U_src, h·U_dst, pre-activation, output
	// Gradient buffers.
	du, ss, sd, gw, dh, de, tmp *gnn.Tensor
	ws                          []float32
	ptr                         []int     // 0, 1, 2, …: one message per edge
	ones                        []float32 // its weights
}

func newEdgeUpdate(name string, hidden int, rng *rand.Rand) *edgeUpdate {
	u := &edgeUpdate{W: gnn.NewParam(name+".W", 3*hidden, hidden, true), B: gnn.NewParam(name+".b", 1, hidden, false), hidden: hidden}
	u.W.Glorot(rng)
	return u
}

func (u *edgeUpdate) params() []*gnn.Param { return []*gnn.Param{u.W, u.B} }

// block returns rows [i·H, (i+1)·H) of t (a 3H×H weight or gradient).
func (u *edgeUpdate) block(t *gnn.Tensor, i int) *gnn.Tensor {
	return t.Slice(i*u.hidden, (i+1)*u.hidden)
}

// forward returns the updated embeddings (ne×H, owned by u) of the edges
// 0..ne−1 with endpoints src[k] → dst[k] (rows of h) and inputs ePrev.
func (u *edgeUpdate) forward(h, ePrev *gnn.Tensor, src, dst []int32, ne int) *gnn.Tensor {
	H := u.hidden
	u.h, u.ePrev, u.src, u.dst, u.ne = h, ePrev, src[:ne], dst[:ne], ne
	u.hs = edgeReuse(u.hs, h.Rows, H)
	edgeMatMul(u.hs, h, u.block(u.W.W, 0))
	u.hd = edgeReuse(u.hd, h.Rows, H)
	edgeMatMul(u.hd, h, u.block(u.W.W, 1))
	u.u = edgeReuse(u.u, ne, H)
	edgeMatMul(u.u, ePrev.Slice(0, ne), u.block(u.W.W, 2))
	u.out = edgeReuse(u.out, ne, H)
	// Bias, endpoint terms, ReLU and the residual in one pass over the rows.
	edgeResidualReLU(u.u.Data, u.out.Data, ePrev.Data, u.B.W.Data, u.hs.Data, u.hd.Data, u.src, u.dst, H)
	return u.out
}

// backward accumulates dU and dc from dOut (ne×H) and returns the
// gradients w.r.t. h (h.Rows×H, owned by u) and ePrev: into de when
// non-nil (ePrev.Rows×H, every element written, zero beyond the first ne
// rows; the layer passes its own buffer and saves a copy of it), else into
// a buffer owned by u.
func (u *edgeUpdate) backward(dOut, de *gnn.Tensor) (*gnn.Tensor, *gnn.Tensor) {
	H, n := u.hidden, u.h.Rows
	if dOut.Rows != u.ne || dOut.Cols != H {
		gnn.ShapePanic("edge update backward", "gradient %v for %d edges of width %d", dOut, u.ne, H)
	}
	u.du = edgeReuse(u.du, u.ne, H)
	gnn.ReLUBackward(u.du, dOut, u.u)
	gnn.AddBiasGrad(u.B.G, u.du)
	// Scatter the edge gradients to their endpoints: ss = Σ_{k: src=v} du_k.
	// One block call per endpoint (edge k is "target" k with the single
	// message src[k], weight 1: the scatter kernels' adds are exact), not
	// a call per edge row.
	for len(u.ptr) <= u.ne {
		u.ptr, u.ones = append(u.ptr, len(u.ptr)), append(u.ones, 1)
	}
	u.ss = edgeReuse(u.ss, n, H)
	u.ss.Zero()
	gnn.ScatterSparseRows(u.ss.Data, u.src, u.ones, u.ptr, u.du.Data, H, 0, H, 0, u.ne)
	u.sd = edgeReuse(u.sd, n, H)
	u.sd.Zero()
	gnn.ScatterSparseRows(u.sd.Data, u.dst, u.ones, u.ptr, u.du.Data, H, 0, H, 0, u.ne)
	u.gw = edgeReuse(u.gw, H, H)
	ePart := u.ePrev.Slice(0, u.ne)
	for i, x := range []*gnn.Tensor{u.h, u.h, ePart} {
		g := []*gnn.Tensor{u.ss, u.sd, u.du}[i]
		gnn.MatMulTN(u.gw, x, g)
		gb := u.block(u.W.G, i)
		gnn.Add(gb, gb, u.gw)
	}
	u.dh = edgeReuse(u.dh, n, H)
	gnn.MatMulNTWork(u.dh, u.ss, u.block(u.W.W, 0), &u.ws)
	u.tmp = edgeReuse(u.tmp, n, H)
	gnn.MatMulNTWork(u.tmp, u.sd, u.block(u.W.W, 1), &u.ws)
	gnn.Add(u.dh, u.dh, u.tmp)
	if de == nil {
		u.de = edgeReuse(u.de, u.ePrev.Rows, H)
		de = u.de
	} else if de.Rows != u.ePrev.Rows || de.Cols != H {
		gnn.ShapePanic("edge update backward", "edge gradient buffer %v for %d edges of width %d", de, u.ePrev.Rows, H)
	}
	clear(de.Data[u.ne*H:])
	gnn.MatMulNTWork(de.Slice(0, u.ne), u.du, u.block(u.W.W, 2), &u.ws)
	gnn.Add(de.Slice(0, u.ne), de.Slice(0, u.ne), dOut)
	return u.dh, de
}

// edgeReuse returns t reshaped to r×c when its storage suffices and a new
// tensor otherwise; contents are unspecified. Batches change shape from
// step to step, so the edge model keeps storage rather than shapes. New
// storage has an eighth to spare: batch sizes wander by a few percent,
// and without the margin every new largest batch reallocated (measured:
// dozens of megabytes per step of garbage at the start of training).
func edgeReuse(t *gnn.Tensor, r, c int) *gnn.Tensor {
	if t != nil && cap(t.Data) >= r*c {
		t.Rows, t.Cols, t.Data = r, c, t.Data[:r*c]
		return t
	}
	n := r * c
	return &gnn.Tensor{Rows: r, Cols: c, Data: make([]float32, n, n+n/8)}
}
