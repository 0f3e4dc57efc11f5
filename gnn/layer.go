package gnn

import "graphfed/graph"

// Features is a layer's node-feature input: exactly one of Sparse (raw
// node features, first layer) and Dense (hidden activations) is set.
type Features struct {
	Sparse *Sparse
	Dense  *Tensor
}

// SparseFeatures wraps a sparse input.
func SparseFeatures(x *Sparse) Features { return Features{Sparse: x} }

// DenseFeatures wraps a dense input.
func DenseFeatures(x *Tensor) Features { return Features{Dense: x} }

// Rows is the number of nodes.
func (f Features) Rows() int {
	if f.Sparse != nil {
		return f.Sparse.Rows()
	}
	return f.Dense.Rows
}

// Cols is the feature dimension.
func (f Features) Cols() int {
	if f.Sparse != nil {
		return f.Sparse.Cols()
	}
	return f.Dense.Cols
}

func (f Features) check(op string) {
	if (f.Sparse == nil) == (f.Dense == nil) {
		panic("gnn: " + op + ": features must be exactly one of sparse and dense")
	}
}

// mul sets dst = f[:dst.Rows]·w: the products of the first dst.Rows nodes.
func (f Features) mul(dst, w *Tensor) {
	nt := dst.Rows
	if f.Sparse == nil {
		if nt == f.Dense.Rows {
			MatMul(dst, f.Dense, w)
		} else {
			MatMul(dst, f.Dense.Slice(0, nt), w)
		}
		return
	}
	m := f.Sparse.M
	if nt != m.Rows {
		if nt > m.Rows {
			ShapePanic("features mul", "%d rows of a %dx%d input", nt, m.Rows, m.Cols)
		}
		end := m.RowPtr[nt]
		prefix := &graph.CSR{Rows: nt, Cols: m.Cols, RowPtr: m.RowPtr[:nt+1], ColIdx: m.ColIdx[:end]}
		if m.Val != nil {
			prefix.Val = m.Val[:end]
		}
		m = prefix
	}
	SpMM(dst, m, w)
}

// mulT sets dst = fᵀ·g, where g has one row per node of f. A sparse f is
// scattered (SpMMT) rather than gathered through a transpose: weight
// gradients g have many zero rows, which the scatter skips. ws is the
// scatter's workspace.
func (f Features) mulT(dst, g *Tensor, ws *[]float32) {
	if f.Sparse == nil {
		MatMulTN(dst, f.Dense, g)
		return
	}
	spmmT(dst, f.Sparse.M, g, ws)
}

// Layer is one message-passing layer. A layer maps the features x of the
// prop.Cols() source nodes to outputs for the prop.Rows() target nodes;
// the targets are the first prop.Rows() sources (all of them in
// full-batch training; fewer in a sampled mini-batch block).
type Layer interface {
	// Forward returns the output (prop.Rows()×Out), owned by the layer
	// and valid until its next Forward. It keeps what Backward needs.
	Forward(prop *Sparse, x Features) *Tensor
	// Backward takes the loss gradient w.r.t. the last Forward's output,
	// adds the parameter gradients into Param.G and returns the gradient
	// w.r.t. x (prop.Cols()×In, owned by the layer), or nil when x was
	// sparse: raw input features need no gradient.
	Backward(dOut *Tensor) *Tensor
	// Params lists the parameters in a fixed order.
	Params() []*Param
	// Dims returns the input and output dimensions.
	Dims() (in, out int)
}

// checkLayerInput panics unless x has in columns and prop's source count
// of rows.
func checkLayerInput(op string, prop *Sparse, x Features, in int) {
	x.check(op)
	if x.Cols() != in || x.Rows() != prop.Cols() || prop.Rows() > prop.Cols() {
		ShapePanic(op, "input %dx%d for propagation %dx%d and %d input features", x.Rows(), x.Cols(), prop.Rows(), prop.Cols(), in)
	}
}

// padRows returns g (r×c) extended by zero rows to n rows, using buf.
func padRows(buf **Tensor, g *Tensor, n int) *Tensor {
	if g.Rows == n {
		return g
	}
	*buf = Reuse(*buf, n, g.Cols)
	copy((*buf).Data, g.Data)
	clear((*buf).Data[len(g.Data):])
	return *buf
}
