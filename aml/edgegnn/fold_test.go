package edgegnn

import (
	"fmt"
	"math"
	"testing"

	"graphfed/gnn"
)

// slotBatch is testBatch with its edge inputs in slots (every column a
// slot) instead of a dense tensor, so that the model may fold its first
// layer; overrides, when asked for, only touch layers 1..L (a layer-0
// override turns the fold off).
func slotBatch(tb testing.TB, seed uint64, nodeIn, edgeIn, hidden int, override bool) (*Batch, []EmbeddingOverride) {
	tb.Helper()
	rng := newRNG(seed)
	b := testBatch(tb, rng, 16, 60, 5, []int{3, 2}, nodeIn, edgeIn)
	s := &SlotRows{Rows: b.EdgeX.Rows, Cols: edgeIn, K: edgeIn}
	for r := range s.Rows {
		for c, v := range b.EdgeX.Row(r) {
			s.Idx, s.Val = append(s.Idx, int32(c)), append(s.Val, v)
		}
	}
	b.EdgeSlots, b.EdgeX = s, nil
	var ovs []EmbeddingOverride
	if override {
		for _, o := range randOverrides(rng, b, hidden) {
			if o.Layer > 0 {
				ovs = append(ovs, o)
			}
		}
	}
	return b, ovs
}

// foldRun returns the logits and every parameter gradient of one forward
// and backward of a fresh model (seeded) on b.
func foldRun(t *testing.T, cfg Config, b *Batch, ovs []EmbeddingOverride, noFold bool) (*gnn.Tensor, [][]float32, bool) {
	t.Helper()
	m, err := NewModel(cfg, newRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	m.noFold = noFold
	for i, p := range m.Params() {
		if p.W.Rows == 1 { // non-zero biases exercise the folded bias rows
			copy(p.W.Data, randTensor(newRNG(uint64(40+i)), 1, p.W.Cols).Data)
		}
	}
	logits := m.Forward(b, ovs, true, newRNG(8)).Clone()
	d := gnn.New(logits.Rows, logits.Cols)
	gnn.SoftmaxCrossEntropy(logits, []int32{0, 1, 0, 1, 1}, nil, []float32{1, 3}, d)
	m.Backward(d)
	var grads [][]float32
	for _, p := range m.Params() {
		grads = append(grads, p.G.Clone().Data)
	}
	return logits, grads, m.layers[0].fold != nil
}

// TestFoldMatchesUnfolded checks that the folded first layer computes the
// unfolded one's logits and gradients, to float32 rounding, for every
// kind and switch the fold applies to, with and without overrides of
// layers 1..L.
func TestFoldMatchesUnfolded(t *testing.T) {
	for _, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		for _, c := range edgeMultiGNNCases {
			if c.ports || c.tdeltas || c.ego {
				continue // these change e0 or h0 after the encoders: no fold
			}
			for _, override := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/override=%v", kind, c.name, override), func(t *testing.T) {
					cfg := Config{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: c.head,
						ReverseMP: c.reverse, EdgeUpdates: c.updates}
					b, ovs := slotBatch(t, 11, cfg.NodeIn, cfg.EdgeIn, cfg.Hidden, override)
					lf, gf, folded := foldRun(t, cfg, b, ovs, false)
					lu, gu, unfolded := foldRun(t, cfg, b, ovs, true)
					if !folded || unfolded {
						t.Fatalf("fold engaged %v (want true), with noFold %v (want false)", folded, unfolded)
					}
					foldClose(t, "logits", lf.Data, lu.Data)
					for i := range gf {
						foldClose(t, fmt.Sprintf("gradient %d", i), gf[i], gu[i])
					}
				})
			}
		}
	}
}

// foldClose fails unless got and want agree within float32 rounding of
// sums of a few dozen terms, relative to want's largest magnitude.
func foldClose(t *testing.T, what string, got, want []float32) {
	t.Helper()
	var scale float64
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	tol := 2e-5 * max(scale, 1e-3)
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s[%d]: folded %v, unfolded %v (|Δ| %.3g > %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

// TestFoldDisengages checks the cases the fold must not run in: dense
// edge inputs, a layer-0 override, ports, time deltas and ego offsets.
func TestFoldDisengages(t *testing.T) {
	base := Config{Kind: KindGIN, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: true, ReverseMP: true, EdgeUpdates: true}
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		dense bool
		ov0   bool
	}{
		{"dense edge inputs", nil, true, false},
		{"layer-0 override", nil, false, true},
		{"ports", func(c *Config) { c.Ports = true }, false, false},
		{"time deltas", func(c *Config) { c.TimeDeltas = true }, false, false},
		{"ego", func(c *Config) { c.EgoIDs = true }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			b, _ := slotBatch(t, 12, cfg.NodeIn, cfg.EdgeIn, cfg.Hidden, false)
			if tc.dense {
				b.EdgeX, b.EdgeSlots = b.EdgeSlots.Dense(), nil
			}
			var ovs []EmbeddingOverride
			if tc.ov0 {
				ovs = []EmbeddingOverride{{Layer: 0, Rows: []int32{0}, Values: gnn.New(1, cfg.Hidden), Keep: 0}}
			}
			m, err := NewModel(cfg, newRNG(3))
			if err != nil {
				t.Fatal(err)
			}
			m.Forward(b, ovs, false, nil)
			if m.layers[0].fold != nil {
				t.Fatal("the first layer folded")
			}
			if m.NodeEmbeddings(0).Rows != b.NumNodes[0] {
				t.Fatalf("h0 has %d rows, want all %d", m.NodeEmbeddings(0).Rows, b.NumNodes[0])
			}
		})
	}
}

// TestGradEdgeModelFolded checks the folded model's parameter gradients
// against central differences, for every kind, with reverse messages
// and edge updates on and off, and with overrides of layers 1..L.
func TestGradEdgeModelFolded(t *testing.T) {
	for i, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		for j, c := range []struct{ reverse, updates, override bool }{{true, true, false}, {true, true, true}, {false, false, false}, {false, true, true}} {
			t.Run(fmt.Sprintf("%s/reverse=%v/updates=%v/override=%v", kind, c.reverse, c.updates, c.override), func(t *testing.T) {
				cfg := Config{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: true, Dropout: 0.2,
					ReverseMP: c.reverse, EdgeUpdates: c.updates}
				b, ovs := slotBatch(t, uint64(90+4*i+j), cfg.NodeIn, cfg.EdgeIn, cfg.Hidden, c.override)
				m, err := NewModel(cfg, newRNG(uint64(20+4*i+j)))
				if err != nil {
					t.Fatal(err)
				}
				rng := newRNG(uint64(30 + j))
				for _, p := range m.Params() {
					if p.W.Rows == 1 {
						copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
					}
				}
				dLogits := gnn.New(b.NumSeeds(), 2)
				loss := func() float64 {
					return gnn.SoftmaxCrossEntropy(m.Forward(b, ovs, true, newRNG(8)), []int32{0, 1, 0, 1, 1}, nil, []float32{1, 3}, dLogits)
				}
				loss()
				if m.layers[0].fold == nil {
					t.Fatal("the first layer did not fold")
				}
				gnn.ZeroGrad(m.Params())
				m.Backward(dLogits)
				for _, p := range m.Params() {
					checkGradPiecewise(t, p.Name, p.W.Data, p.G.Clone().Data, loss, edgeFDStep)
				}
			})
		}
	}
}
