package edgegnn

import (
	"fmt"
	"math"
	"testing"

	"graphfed/gnn"
)

// amlOverrides are the overrides the AML learner's CE-FedGNN estimators
// build at every layer l ≥ 1: foreign accounts' released pre-activations
// (Keep 0, Pre) and our boundary accounts' moving averages mixed into the
// fresh pre-activation (Keep γ, Pre).
func amlOverrides(b *Batch, hidden int, gamma float32, seed uint64) []EmbeddingOverride {
	rng := newRNG(seed)
	var ovs []EmbeddingOverride
	for l := 1; l <= b.Layers(); l++ {
		if b.NumNodes[l] < 3 {
			continue
		}
		ovs = append(ovs,
			EmbeddingOverride{Layer: l, Rows: []int32{0, 1}, Values: randTensor(rng, 2, hidden), Pre: true},
			EmbeddingOverride{Layer: l, Rows: []int32{2}, Values: randTensor(rng, 1, hidden), Keep: gamma, Pre: true})
	}
	return ovs
}

// The parameter gradients under the AML learner's per-layer overrides
// match finite differences, and replaced rows pass no gradient on.
func TestGradEdgeModelAMLOverrides(t *testing.T) {
	for i, kind := range []string{KindGIN, gnn.KindSAGE} {
		for _, gamma := range []float32{0.1, 0.5, 0.9} {
			t.Run(fmt.Sprintf("%s/γ=%v", kind, gamma), func(t *testing.T) {
				rng := newRNG(uint64(300 + 10*i))
				cfg := Config{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: true,
					ReverseMP: true, EdgeUpdates: true}
				m, err := NewModel(cfg, rng)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range m.Params() {
					if p.W.Rows == 1 {
						copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
					}
				}
				b := testBatch(t, rng, 16, 60, 5, []int{3, 2}, cfg.NodeIn, cfg.EdgeIn)
				ovs := amlOverrides(b, cfg.Hidden, gamma, uint64(7+i))
				if len(ovs) == 0 {
					t.Fatal("batch too small for overrides")
				}
				labels := []int32{0, 1, 0, 1, 1}
				dLogits := gnn.New(b.NumSeeds(), 2)
				loss := func() float64 {
					return gnn.SoftmaxCrossEntropy(m.Forward(b, ovs, false, nil), labels, nil, []float32{1, 3}, dLogits)
				}
				loss()
				gnn.ZeroGrad(m.Params())
				m.Backward(dLogits)
				for _, p := range m.Params() {
					checkGradPiecewise(t, p.Name, p.W.Data, p.G.Clone().Data, loss, edgeFDStep)
				}
				for l, layer := range m.layers {
					checkOverrideGrads(t, layer, ovs, l+1)
				}
			})
		}
	}
}

// An override with a basis moves the computed row only within the basis's
// span (the orthogonal part is untouched, the span part lands on Values
// for Keep 0), and the parameter gradients under such overrides, at
// Keep 0 and 0.4, match finite differences.
func TestGradEdgeModelBasisOverrides(t *testing.T) {
	const H = 6
	rng := newRNG(910)
	basis := gnn.OrthonormalColumns(rng, H, 2)
	row := randTensor(rng, 1, H)
	vals := randTensor(rng, 1, H)
	got := row.Clone()
	applyOverrides(got, []EmbeddingOverride{{Layer: 1, Rows: []int32{0}, Values: vals, Pre: true, Basis: basis}}, 1, true)
	for q := range 2 { // in the span: Bᵀ·got = Bᵀ·vals
		var a, b float64
		for j := range H {
			a += float64(basis.Data[j*2+q] * got.Data[j])
			b += float64(basis.Data[j*2+q] * vals.Data[j])
		}
		if math.Abs(a-b) > 1e-5 {
			t.Fatalf("span coordinate %d: %v, want Values' %v", q, a, b)
		}
	}
	for j := range H { // outside it: (I − BBᵀ)·got = (I − BBᵀ)·row
		var pg, pr float32
		for q := range 2 {
			var dg, dr float32
			for i := range H {
				dg += basis.Data[i*2+q] * got.Data[i]
				dr += basis.Data[i*2+q] * row.Data[i]
			}
			pg += dg * basis.Data[j*2+q]
			pr += dr * basis.Data[j*2+q]
		}
		if d := (got.Data[j] - pg) - (row.Data[j] - pr); math.Abs(float64(d)) > 1e-5 {
			t.Fatalf("coordinate %d outside the span moved by %v", j, d)
		}
	}
	for i, keep := range []float32{0, 0.4} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			rng := newRNG(uint64(920 + i))
			cfg := Config{Kind: KindGIN, NodeIn: 3, EdgeIn: 4, Hidden: H, Layers: 2, Classes: 2, HeadEdge: true,
				ReverseMP: true, EdgeUpdates: true}
			m, err := NewModel(cfg, rng)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params() {
				if p.W.Rows == 1 {
					copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
				}
			}
			b := testBatch(t, rng, 16, 60, 5, []int{3, 2}, cfg.NodeIn, cfg.EdgeIn)
			var ovs []EmbeddingOverride
			for l := 1; l <= b.Layers(); l++ {
				if b.NumNodes[l] >= 2 {
					ovs = append(ovs, EmbeddingOverride{Layer: l, Rows: []int32{0, 1}, Values: randTensor(rng, 2, H), Keep: keep, Pre: true,
						Basis: gnn.OrthonormalColumns(rng, H, 1+l)})
				}
			}
			if len(ovs) == 0 {
				t.Fatal("batch too small for overrides")
			}
			if err := m.CheckOverrides(b, ovs); err != nil {
				t.Fatal(err)
			}
			labels := []int32{0, 1, 0, 1, 1}
			dLogits := gnn.New(b.NumSeeds(), 2)
			loss := func() float64 {
				return gnn.SoftmaxCrossEntropy(m.Forward(b, ovs, false, nil), labels, nil, []float32{1, 3}, dLogits)
			}
			loss()
			gnn.ZeroGrad(m.Params())
			m.Backward(dLogits)
			for _, p := range m.Params() {
				checkGradPiecewise(t, p.Name, p.W.Data, p.G.Clone().Data, loss, edgeFDStep)
			}
		})
	}
}
