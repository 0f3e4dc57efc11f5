package edgegnn

import (
	"math/rand/v2"

	"graphfed/gnn"
)

// Dense building blocks of the edge model: an affine map with its
// backward, and row gathers and scatters between node, edge and message
// tensors that read or write one column block of a wider (concatenated)
// tensor, so that concatenations cost no extra copies.

// edgeLinear is the affine map out = x·W + b, x m×In, W In×Out, b 1×Out.
type edgeLinear struct {
	W, B *gnn.Param
	// sparseIn marks inputs that are mostly zeros (one-hot edge features):
	// the weight gradient then skips them row by row.
	sparseIn bool

	x           *gnn.Tensor // input of the last forward (not owned)
	xs          *SlotRows   // or its input in slots (forwardSlots)
	out, dx, gw *gnn.Tensor
	ws          []float32
}

// newEdgeLinear returns an in→out map with Glorot weights (Decay set) and
// zero bias, named name+".W" and name+".b".
func newEdgeLinear(name string, in, out int, rng *rand.Rand) *edgeLinear {
	l := &edgeLinear{W: gnn.NewParam(name+".W", in, out, true), B: gnn.NewParam(name+".b", 1, out, false)}
	l.W.Glorot(rng)
	return l
}

func (l *edgeLinear) params() []*gnn.Param { return []*gnn.Param{l.W, l.B} }

// forward returns x·W + b (x.Rows×Out), owned by l.
func (l *edgeLinear) forward(x *gnn.Tensor) *gnn.Tensor {
	in, out := l.W.W.Rows, l.W.W.Cols
	if x.Cols != in {
		gnn.ShapePanic("edge linear forward", "input %v for %dx%d weights", x, in, out)
	}
	l.x, l.xs = x, nil
	l.out = edgeReuse(l.out, x.Rows, out)
	edgeMatMulBias(l.out, x, l.W.W, l.B.W)
	return l.out
}

// forwardSlots is forward for an input in slots: the sum of the weight
// rows its slots name, scaled, plus b. Its backward gives no dx.
func (l *edgeLinear) forwardSlots(x *SlotRows) *gnn.Tensor {
	in, out := l.W.W.Rows, l.W.W.Cols
	if x.Cols != in {
		gnn.ShapePanic("edge linear forward", "input %dx%d for %dx%d weights", x.Rows, x.Cols, in, out)
	}
	l.x, l.xs = nil, x
	l.out = edgeReuse(l.out, x.Rows, out)
	x.mul(l.out, l.W.W, l.B.W)
	return l.out
}

// backward adds dW = xᵀ·dOut and db = Σ dOut into the gradients and
// returns dx = dOut·Wᵀ (owned by l), or nil when wantDx is false.
func (l *edgeLinear) backward(dOut *gnn.Tensor, wantDx bool) *gnn.Tensor {
	in, out := l.W.W.Rows, l.W.W.Cols
	if l.xs != nil {
		if wantDx || dOut.Rows != l.xs.Rows || dOut.Cols != out {
			gnn.ShapePanic("edge linear backward", "gradient %v for output %dx%d from slots (no input gradient)", dOut, l.xs.Rows, out)
		}
		gnn.AddBiasGrad(l.B.G, dOut)
		l.xs.mulTAdd(l.W.G, dOut)
		return nil
	}
	if dOut.Rows != l.x.Rows || dOut.Cols != out {
		gnn.ShapePanic("edge linear backward", "gradient %v for output %dx%d", dOut, l.x.Rows, out)
	}
	gnn.AddBiasGrad(l.B.G, dOut)
	if l.sparseIn {
		sparseWeightGrad(l.W.G, l.x, dOut)
	} else {
		l.gw = edgeReuse(l.gw, in, out)
		gnn.MatMulTN(l.gw, l.x, dOut)
		gnn.Add(l.W.G, l.W.G, l.gw)
	}
	if !wantDx {
		return nil
	}
	l.dx = edgeReuse(l.dx, l.x.Rows, in)
	gnn.MatMulNTWork(l.dx, dOut, l.W.W, &l.ws)
	return l.dx
}

// sparseWeightGrad adds xᵀ·g into gw (x m×k with k ≤ gnn.MaxCompact, g m×n,
// gw k×n), visiting only the non-zeros of x, compacted row by row as
// MatMul does.
func sparseWeightGrad(gw, x, g *gnn.Tensor) {
	if x.Cols > gnn.MaxCompact || gw.Rows != x.Cols || gw.Cols != g.Cols || g.Rows != x.Rows {
		gnn.ShapePanic("sparse weight grad", "(%v)ᵀ · %v into %v (at most %d input columns)", x, g, gw, gnn.MaxCompact)
	}
	var idx [gnn.MaxCompact]int32
	var val [gnn.MaxCompact]float32
	n := g.Cols
	for i := 0; i < x.Rows; i++ {
		c := 0
		for p, v := range x.Row(i) {
			idx[c], val[c] = int32(p), v
			c += gnn.NonZero(v)
		}
		gnn.ScatterSparse(gw.Data, idx[:c], val[:c], g.Data[i*n:(i+1)*n], n)
	}
}

// edgeCols returns row r's columns [c0, c0+n) of t.
func edgeCols(t *gnn.Tensor, r, c0, n int) []float32 {
	at := r*t.Cols + c0
	return t.Data[at : at+n]
}

// edgeGatherMsgs sets columns [c0, c0+src.Cols) of row t of dst (one row
// per target) to Σ_k w[k]·src[cols[k]] over target t's messages.
func edgeGatherMsgs(dst *gnn.Tensor, c0 int, m *Messages, cols []int32, w []float32, src *gnn.Tensor) {
	n := src.Cols
	rows := len(m.Ptr) - 1
	if dst.Cols < c0+n {
		gnn.ShapePanic("edge gather msgs", "columns [%d,%d) of %v", c0, c0+n, dst)
	}
	body := func(lo, hi int) {
		if !gatherRows(dst.Data, dst.Cols, c0, m.Ptr, cols, w, src.Data, n, lo, hi, nil) {
			gnn.GatherSparseRows(dst.Data, dst.Cols, c0, m.Ptr, cols, w, src.Data, n, lo, hi)
		}
	}
	if p := gnn.ParallelWorkers(rows, len(cols)*n); p > 1 {
		gnn.ParallelSplit(rows, p, body)
		return
	}
	body(0, rows)
}

// edgeScatterMsgs is edgeGatherMsgs' transpose: it adds w[k]·g[t] (columns
// [c0, c0+dst.Cols) of g's row t) into row cols[k] of dst for every
// message k of every target t.
func edgeScatterMsgs(dst *gnn.Tensor, cols []int32, w []float32, m *Messages, g *gnn.Tensor, c0 int) {
	n := dst.Cols
	if g.Cols < c0+n {
		gnn.ShapePanic("edge scatter msgs", "columns [%d,%d) of %v", c0, c0+n, g)
	}
	gnn.ScatterSparseRows(dst.Data, cols, w, m.Ptr, g.Data, g.Cols, c0, n, 0, len(m.Ptr)-1)
}

// edgeGatherRows sets columns [c0, c0+src.Cols) of dst's row i to
// scale[i]·src[rows[i]] for i < len(rows) (scale nil means 1; rows nil
// means row i itself).
func edgeGatherRows(dst *gnn.Tensor, c0 int, src *gnn.Tensor, rows []int32, scale []float32, count int) {
	n := src.Cols
	for i := range count {
		r := i
		if rows != nil {
			r = int(rows[i])
		}
		d, s := edgeCols(dst, i, c0, n), src.Row(r)
		if scale == nil {
			copy(d, s)
			continue
		}
		a := scale[i]
		for j, v := range s {
			d[j] = a * v
		}
	}
}

// edgeScatterRows adds scale[i]·g[i] (columns [c0, c0+dst.Cols) of g's row i)
// into dst[rows[i]] for i < count (scale nil means 1; rows nil means row
// i itself).
func edgeScatterRows(dst *gnn.Tensor, rows []int32, scale []float32, g *gnn.Tensor, c0 int, count int) {
	n := dst.Cols
	for i := range count {
		r := i
		if rows != nil {
			r = int(rows[i])
		}
		d, s := dst.Row(r), edgeCols(g, i, c0, n)
		if scale == nil {
			gnn.AddInto(d, s)
			continue
		}
		a := scale[i]
		for j, v := range s {
			d[j] += a * v
		}
	}
}
