package gnn

import (
	"fmt"
	"testing"
)

// amlOverrides are the overrides the AML learner's CE-FedGNN estimators
// build at every layer l ≥ 1: foreign accounts' released pre-activations
// (Keep 0, Pre) and our boundary accounts' moving averages mixed into the
// fresh pre-activation (Keep γ, Pre).
func amlOverrides(b *EdgeBatch, hidden int, gamma float32, seed uint64) []EmbeddingOverride {
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
	for i, kind := range []string{KindGIN, KindSAGE} {
		for _, gamma := range []float32{0.1, 0.5, 0.9} {
			t.Run(fmt.Sprintf("%s/γ=%v", kind, gamma), func(t *testing.T) {
				rng := newRNG(uint64(300 + 10*i))
				cfg := EdgeConfig{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: true,
					ReverseMP: true, EdgeUpdates: true}
				m, err := NewEdgeModel(cfg, rng)
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
				dLogits := New(b.NumSeeds(), 2)
				loss := func() float64 {
					return SoftmaxCrossEntropy(m.Forward(b, ovs, false, nil), labels, nil, []float32{1, 3}, dLogits)
				}
				loss()
				ZeroGrad(m.Params())
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
