package edgegnn

import (
	"fmt"

	"graphfed/gnn"
)

// EmbeddingOverride substitutes externally supplied values for some rows
// of one layer's node embeddings during Model.Forward. It is the hook
// CE-FedGNN needs: a cross-client neighbour's layer-l embedding is its
// last released value, read from a cache, not something the local client
// can compute; and the moving-average estimator (CE-FedGNN Eq. 5) mixes a
// node's fresh pre-activation with its running estimate.
//
// Layer l's embeddings are h^l = ReLU(Z^l) for the NumNodes[l] first node
// rows of the batch (l = 1..L), and for l = 0 the encoded input features
// (no activation; Pre is ignored). For each i, row r = Rows[i] becomes
//
//	Keep·computed[r] + (1 − Keep)·Values[i]
//
// applied to Z^l when Pre is set (the activation then follows) and to h^l
// otherwise. Backward multiplies the gradient that reaches the computed
// row by Keep: with Keep = 0 (replace outright) nothing back-propagates
// into the row, so no parameter, input or lower layer receives gradient
// through it. Overrides of one layer apply in slice order; they compose.
//
// Typical uses:
//
//   - remote neighbour (CE-FedGNN Eq. 8, 10): Keep 0, Pre false, Values
//     the released (normalised, noised) embeddings;
//   - moving-average estimate (Eq. 5): Keep γ, Pre true, Values the
//     previous estimates H̃; afterwards PreActivations(l) holds the new
//     H̃ = (1−γ)·H̃ + γ·Z for those rows.
//
// With a Basis B (Hidden×r, orthonormal columns) the override acts only
// within B's span: row r becomes
//
//	computed[r] + (1 − Keep)·B·Bᵀ·(Values[i] − computed[r])
//
// so the components of the computed row outside the span are kept and
// back-propagate as usual, and the gradient that reaches the computed row
// is (I − (1 − Keep)·B·Bᵀ)·∂. It is the hook for a release of r < Hidden
// coordinates per node: the receiver corrects its own view of a foreign
// node in the released directions and keeps it in the others.
type EmbeddingOverride struct {
	Layer  int         // 0..L
	Rows   []int32     // batch-local node rows, each below the batch's NumNodes[Layer]
	Values *gnn.Tensor // len(Rows)×Hidden
	Keep   float32     // weight of the computed value, in [0, 1]
	Pre    bool        // mix the pre-activation Z^l rather than h^l
	Basis  *gnn.Tensor // nil, or Hidden×r with orthonormal columns (r ≥ 1)
}

// check reports an override that does not fit batch b and a model with
// the given hidden width.
func (o *EmbeddingOverride) check(b *Batch, hidden int) error {
	L := b.Layers()
	if o.Layer < 0 || o.Layer > L {
		return fmt.Errorf("layer %d outside [0,%d]", o.Layer, L)
	}
	if o.Values == nil || o.Values.Rows != len(o.Rows) || o.Values.Cols != hidden {
		return fmt.Errorf("values %v for %d rows of width %d", o.Values, len(o.Rows), hidden)
	}
	if !(o.Keep >= 0 && o.Keep <= 1) {
		return fmt.Errorf("keep %v outside [0,1]", o.Keep)
	}
	if o.Basis != nil && (o.Basis.Rows != hidden || o.Basis.Cols < 1 || o.Basis.Cols > hidden || !o.Basis.AllFinite()) {
		return fmt.Errorf("basis %v for width %d, want %d×r finite with 1 ≤ r ≤ %d", o.Basis, hidden, hidden, hidden)
	}
	n := b.NumNodes[o.Layer]
	for _, r := range o.Rows {
		if r < 0 || int(r) >= n {
			return fmt.Errorf("row %d outside layer %d's %d nodes", r, o.Layer, n)
		}
	}
	if !o.Values.AllFinite() {
		return fmt.Errorf("values are not finite")
	}
	return nil
}

// applies reports whether o acts on layer l at stage pre (layer 0 has a
// single stage).
func (o *EmbeddingOverride) applies(l int, pre bool) bool {
	return o.Layer == l && (l == 0 || o.Pre == pre)
}

// applyOverrides mixes the overrides of layer l at stage pre into t.
func applyOverrides(t *gnn.Tensor, ovs []EmbeddingOverride, l int, pre bool) {
	for i := range ovs {
		o := &ovs[i]
		if !o.applies(l, pre) {
			continue
		}
		if o.Basis != nil {
			diff := make([]float32, len(o.Values.Row(0)))
			for k, r := range o.Rows {
				d, v := t.Row(int(r)), o.Values.Row(k)
				for j := range diff {
					diff[j] = v[j] - d[j]
				}
				addProjected(d, o.Basis, diff, 1-o.Keep)
			}
			continue
		}
		for k, r := range o.Rows {
			d, v := t.Row(int(r)), o.Values.Row(k)
			if o.Keep == 0 {
				copy(d, v)
				continue
			}
			for j := range d {
				d[j] = o.Keep*d[j] + (1-o.Keep)*v[j]
			}
		}
	}
}

// scaleOverrideGrads multiplies the gradient rows of the overridden rows
// of layer l at stage pre by Keep (setting them to 0 for Keep = 0).
func scaleOverrideGrads(g *gnn.Tensor, ovs []EmbeddingOverride, l int, pre bool) {
	for i := range ovs {
		o := &ovs[i]
		if !o.applies(l, pre) {
			continue
		}
		if o.Basis != nil {
			g0 := make([]float32, g.Cols)
			for _, r := range o.Rows {
				d := g.Row(int(r))
				copy(g0, d)
				addProjected(d, o.Basis, g0, -(1 - o.Keep))
			}
			continue
		}
		for _, r := range o.Rows {
			d := g.Row(int(r))
			if o.Keep == 0 {
				clear(d)
				continue
			}
			for j := range d {
				d[j] *= o.Keep
			}
		}
	}
}

// addProjected adds c·B·Bᵀ·x to d (B Hidden×r; d, x of Hidden values).
func addProjected(d []float32, b *gnn.Tensor, x []float32, c float32) {
	r := b.Cols
	for q := range r {
		var dot float32
		for j, v := range x {
			dot += b.Data[j*r+q] * v
		}
		dot *= c
		for j := range d {
			d[j] += dot * b.Data[j*r+q]
		}
	}
}
