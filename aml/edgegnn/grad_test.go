package edgegnn

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"graphfed/gnn"
)

// Finite-difference gradient tests of the edge model's operations, layers,
// head and override path, in the style of grad_test.go: a scalar loss
// Σ out⊙R (R random) or the cross-entropy itself against the hand-written
// backward passes.

func TestGradEdgeLinear(t *testing.T) {
	rng := newRNG(30)
	for _, s := range []struct{ m, in, out int }{{1, 1, 1}, {5, 7, 3}, {9, 20, 16}} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.in, s.out), func(t *testing.T) {
			l := newEdgeLinear("l", s.in, s.out, rng)
			copy(l.B.W.Data, randTensor(rng, 1, s.out).Data)
			x, r := randTensor(rng, s.m, s.in), randTensor(rng, s.m, s.out)
			loss := func() float64 { return sumProduct(l.forward(x), r) }
			loss()
			dx := l.backward(r, true).Clone()
			checkGrad(t, "x", x.Data, dx.Data, loss, edgeFDStep)
			checkGrad(t, "W", l.W.W.Data, l.W.G.Clone().Data, loss, edgeFDStep)
			checkGrad(t, "b", l.B.W.Data, l.B.G.Clone().Data, loss, edgeFDStep)
		})
	}
}

// TestGradEdgeGathers checks that the message and row scatters are the
// transposes of the gathers: ⟨gather(x), R⟩ = ⟨x, scatter(R)⟩ exactly
// describes the backward of a linear map, checked by differences.
func TestGradEdgeGathers(t *testing.T) {
	rng := newRNG(31)
	b := testBatch(t, rng, 12, 40, 3, []int{2, -1}, 1, 1)
	const w = 5
	for l := 1; l <= b.Layers(); l++ {
		blk := &b.Blocks[l-1]
		nt, ns, ne := b.NumNodes[l], b.NumNodes[l-1], b.NumEdges[l-1]
		for _, c := range []struct {
			name string
			m    *Messages
			cols []int32
			rows int
		}{{"in/src", &blk.In, blk.In.Src, ns}, {"out/src", &blk.Out, blk.Out.Src, ns},
			{"in/edge", &blk.In, blk.In.Edge, ne}, {"out/edge", &blk.Out, blk.Out.Edge, ne}} {
			t.Run(fmt.Sprintf("layer%d/%s", l, c.name), func(t *testing.T) {
				weights := randTensor(rng, 1, len(c.cols)).Data
				src := randTensor(rng, c.rows, w)
				r := randTensor(rng, nt, 3*w)
				out := gnn.New(nt, 3*w)
				loss := func() float64 { edgeGatherMsgs(out, w, c.m, c.cols, weights, src); return sumProduct(out, r) }
				grad := gnn.New(c.rows, w)
				edgeScatterMsgs(grad, c.cols, weights, c.m, r, w)
				checkGrad(t, "src", src.Data, grad.Data, loss, edgeFDStep)
			})
		}
	}
	t.Run("rows", func(t *testing.T) {
		src, r := randTensor(rng, 6, w), randTensor(rng, 4, 2*w)
		rows, scale := []int32{5, 0, 5, 2}, []float32{0.5, -1, 2, 0.25}
		out := gnn.New(4, 2*w)
		loss := func() float64 { edgeGatherRows(out, w, src, rows, scale, 4); return sumProduct(out, r) }
		grad := gnn.New(6, w)
		edgeScatterRows(grad, rows, scale, r, w, 4)
		checkGrad(t, "src", src.Data, grad.Data, loss, edgeFDStep)
	})
}

// edgeLayerCases are the layer configurations of the gradient tests.
var edgeLayerCases = []struct {
	kind     string
	update   bool
	fanOut   []int
	override bool
	reverse  bool
}{
	{gnn.KindSAGE, true, []int{-1, -1}, false, true},
	{gnn.KindSAGE, false, []int{2, 3}, true, true},
	{gnn.KindSAGE, true, []int{2, 3}, true, false},
	{gnn.KindGCN, true, []int{2, 3}, false, true},
	{gnn.KindGCN, true, []int{-1, 2}, true, true},
	{gnn.KindGCN, false, []int{2, 2}, true, false},
	{KindGIN, true, []int{2, 3}, false, true},
	{KindGIN, false, []int{-1, -1}, true, true},
	{KindGIN, true, []int{3, 1}, true, true},
	{KindGIN, true, []int{3, 2}, true, false},
	{KindGIN, false, []int{-1, -1}, false, false},
}

// TestGradEdgeLayer checks every layer configuration on several random
// streams (batch, overrides, weights): a single stream once hid how the
// old retry-with-a-smaller-step check misread a ReLU kink as a gradient
// error, and a real error must not hide behind one lucky draw either.
func TestGradEdgeLayer(t *testing.T) {
	const streams = 4
	for i, c := range edgeLayerCases {
		for s := range streams {
			t.Run(fmt.Sprintf("%s/update=%v/fan=%v/override=%v/reverse=%v/stream%d", c.kind, c.update, c.fanOut, c.override, c.reverse, s), func(t *testing.T) {
				checkEdgeLayerGrads(t, c.kind, c.update, c.fanOut, c.override, c.reverse, newRNG(uint64(40+i+100*s)))
			})
		}
	}
}

// checkEdgeLayerGrads checks both layers of a random batch with the given
// fan-outs against differences that straddle no ReLU kink.
func checkEdgeLayerGrads(t *testing.T, kind string, update bool, fanOut []int, override, reverse bool, rng *rand.Rand) {
	t.Helper()
	const H = 6
	b := testBatch(t, rng, 14, 50, 4, fanOut, 1, 1)
	var ovs []EmbeddingOverride
	if override {
		ovs = randOverrides(rng, b, H)
	}
	for layer := 1; layer <= b.Layers(); layer++ {
		l, err := newEdgeLayer("l", kind, H, update, reverse, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.params() {
			if p.W.Rows == 1 { // non-zero biases and ε
				copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
			}
		}
		hPrev := randTensor(rng, b.NumNodes[layer-1], H)
		ePrev := randTensor(rng, b.NumEdges[layer-1], H)
		rh := randTensor(rng, b.NumNodes[layer], H)
		re := randTensor(rng, b.NumEdges[layer], H)
		loss := func() float64 {
			h, e := l.forward(b, layer, hPrev, ePrev, ovs)
			s := sumProduct(h, rh)
			if e != nil {
				s += sumProduct(e, re)
			}
			return s
		}
		loss()
		gnn.ZeroGrad(l.params())
		var dE *gnn.Tensor
		if update {
			dE = re
		}
		dh, de := l.backward(rh, dE)
		dh, de = dh.Clone(), de.Clone()
		kinks := func(dst []bool) []bool { return edgeLayerKinks(dst, l, ovs, layer) }
		for _, p := range l.params() {
			checkGradKinks(t, fmt.Sprintf("layer%d/%s", layer, p.Name), p.W.Data, p.G.Clone().Data, loss, kinks, edgeKinkStep)
		}
		checkGradKinks(t, fmt.Sprintf("layer%d/hPrev", layer), hPrev.Data, dh.Data, loss, kinks, edgeKinkStep)
		checkGradKinks(t, fmt.Sprintf("layer%d/ePrev", layer), ePrev.Data, de.Data, loss, kinks, edgeKinkStep)
		checkOverrideGrads(t, l, ovs, layer)
	}
}

// edgeLayerKinks appends the signs of every ReLU input of l's last
// forward that reaches the output: the node pre-activation Z, GIN's MLP
// hidden pre-activation and the edge update's pre-activation. Rows that
// an override with Keep 0 replaces are left out: their computed values
// reach nothing, so their kinks are not the loss's.
func edgeLayerKinks(dst []bool, l *edgeLayer, ovs []EmbeddingOverride, layer int) []bool {
	dead := map[int]bool{}
	for _, o := range ovs {
		if o.Layer == layer && o.Keep == 0 {
			for _, r := range o.Rows {
				dead[int(r)] = true
			}
		}
	}
	node := []*gnn.Tensor{l.z}
	if l.mlp1 != nil {
		node = append(node, l.mlp1.out)
	}
	for _, t := range node {
		for r := range t.Rows {
			if !dead[r] {
				dst = appendSigns(dst, t.Row(r))
			}
		}
	}
	if l.update != nil {
		dst = appendSigns(dst, l.update.u.Data)
	}
	return dst
}

// checkOverrideGrads asserts that rows overridden with Keep 0 at layer
// passed no gradient into the layer's computed pre-activation.
func checkOverrideGrads(t *testing.T, l *edgeLayer, ovs []EmbeddingOverride, layer int) {
	t.Helper()
	for _, o := range ovs {
		if o.Layer != layer || o.Keep != 0 {
			continue
		}
		for _, r := range o.Rows {
			for _, g := range l.dz.Row(int(r)) {
				if g != 0 {
					t.Fatalf("layer %d: overridden row %d receives gradient %v", layer, r, g)
				}
			}
		}
	}
}

func TestGradEdgeHead(t *testing.T) {
	const H = 5
	for i, c := range []struct {
		useEdge bool
		dropout float64
	}{{true, 0}, {false, 0}, {true, 0.4}} {
		t.Run(fmt.Sprintf("edge=%v/dropout=%v", c.useEdge, c.dropout), func(t *testing.T) {
			rng := newRNG(uint64(50 + i))
			b := testBatch(t, rng, 10, 30, 5, []int{2, 2}, 1, 1)
			hd := newEdgeHead(H, 2, c.useEdge, c.dropout, rng)
			for _, p := range hd.params() {
				if p.W.Rows == 1 { // non-zero biases
					copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
				}
			}
			h := randTensor(rng, b.NumNodes[2], H)
			e := randTensor(rng, b.NumSeeds(), H)
			r := randTensor(rng, b.NumSeeds(), 2)
			loss := func() float64 { return sumProduct(hd.forward(b, h, e, true, newRNG(9)), r) }
			loss()
			gnn.ZeroGrad(hd.params())
			dh, de := hd.backward(r)
			for _, p := range hd.params() {
				checkGradPiecewise(t, p.Name, p.W.Data, p.G.Clone().Data, loss, edgeFDStep)
			}
			checkGradPiecewise(t, "h", h.Data, dh.Clone().Data, loss, edgeFDStep)
			if c.useEdge {
				checkGradPiecewise(t, "e", e.Data, de.Clone().Data, loss, edgeFDStep)
			} else if de != nil {
				t.Fatal("edge gradient without the edge input")
			}
		})
	}
}

// TestGradEdgeModel checks whole models — encoders, layers with edge
// updates, head with dropout, weighted cross-entropy — against central
// differences, with and without overrides on every layer, and the inputs'
// gradients through the encoders.
func TestGradEdgeModel(t *testing.T) {
	for i, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		for _, override := range []bool{false, true} {
			for _, headEdge := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/override=%v/headEdge=%v", kind, override, headEdge), func(t *testing.T) {
					cfg := Config{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 6, Layers: 2, Classes: 2, HeadEdge: headEdge, Dropout: 0.2,
						ReverseMP: true, EdgeUpdates: true}
					checkEdgeModelGrads(t, cfg, override, uint64(60+4*i+2*edgeB2I(override)+edgeB2I(headEdge)))
				})
			}
		}
	}
}

// edgeMultiGNNCases are combinations of the Multi-GNN switches: none, each
// alone, all together, and a few pairs.
var edgeMultiGNNCases = []struct {
	name                                        string
	reverse, updates, ports, tdeltas, ego, head bool
}{
	{"plain", false, false, false, false, false, true},
	{"plain/no-head-edge", false, false, false, false, false, false},
	{"eu", false, true, false, false, false, true},
	{"reverse", true, false, false, false, false, true},
	{"ports", false, false, true, false, false, true},
	{"tdeltas", false, false, false, true, false, true},
	{"ego", false, false, false, false, true, true},
	{"all", true, true, true, true, true, true},
	{"all/no-head-edge", true, true, true, true, true, false},
	{"eu+ports+ego", false, true, true, false, true, true},
}

// TestGradEdgeModelMultiGNN checks the gradients of every Multi-GNN
// switch, alone and combined, for every kind, with overrides.
func TestGradEdgeModelMultiGNN(t *testing.T) {
	for i, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		for j, c := range edgeMultiGNNCases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				cfg := Config{Kind: kind, NodeIn: 3, EdgeIn: 4, Hidden: 5, Layers: 2, Classes: 2, HeadEdge: c.head, Dropout: 0.2,
					ReverseMP: c.reverse, EdgeUpdates: c.updates, Ports: c.ports, TimeDeltas: c.tdeltas, EgoIDs: c.ego}
				checkEdgeModelGrads(t, cfg, j%2 == 0, uint64(200+16*i+j))
			})
		}
	}
}

// checkEdgeModelGrads builds cfg's model with non-zero biases on a random
// batch (with random order features) and checks every parameter's
// gradient and the inputs' gradients through the encoders.
func checkEdgeModelGrads(t *testing.T, cfg Config, override bool, seed uint64) {
	t.Helper()
	rng := newRNG(seed)
	H := cfg.Hidden
	m, err := NewModel(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		if p.W.Rows == 1 { // non-zero biases, ε and ego offsets: no exact kinks
			copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
		}
	}
	b := testBatch(t, rng, 16, 60, 5, []int{3, 2}, cfg.NodeIn, cfg.EdgeIn)
	var ovs []EmbeddingOverride
	if override {
		ovs = randOverrides(rng, b, H)
	}
	labels := []int32{0, 1, 0, 1, 1}
	weights := []float32{1, 3}
	dLogits := gnn.New(b.NumSeeds(), 2)
	loss := func() float64 {
		return gnn.SoftmaxCrossEntropy(m.Forward(b, ovs, true, newRNG(8)), labels, nil, weights, dLogits)
	}
	loss()
	gnn.ZeroGrad(m.Params())
	m.Backward(dLogits)
	for _, p := range m.Params() {
		checkGradPiecewise(t, p.Name, p.W.Data, p.G.Clone().Data, loss, edgeFDStep)
	}
	dx := gnn.New(b.NodeX.Rows, b.NodeX.Cols)
	gnn.MatMulNT(dx, m.dh0, m.nodeEnc.W.W)
	checkGradPiecewise(t, "node inputs", b.NodeX.Data, dx.Data, loss, edgeFDStep)
	dex := gnn.New(b.EdgeX.Rows, b.EdgeX.Cols)
	gnn.MatMulNT(dex, m.de0, m.edgeEnc.W.W)
	checkGradPiecewise(t, "edge inputs", b.EdgeX.Data, dex.Data, loss, edgeFDStep)
	for l, layer := range m.layers {
		checkOverrideGrads(t, layer, ovs, l+1)
	}
	for _, o := range ovs {
		if o.Layer == 0 && o.Keep == 0 {
			for _, r := range o.Rows {
				for _, g := range m.dh0.Row(int(r)) {
					if g != 0 {
						t.Fatalf("overridden input row %d receives gradient %v", r, g)
					}
				}
			}
		}
	}
}

// TestEdgeOverrideBlocksEverything overrides every last-layer node with
// Keep 0 under a head without the edge embedding: the logits then depend
// on the supplied values only, and no parameter below the head receives
// gradient.
func TestEdgeOverrideBlocksEverything(t *testing.T) {
	const H = 4
	rng := newRNG(70)
	for _, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		cfg := Config{Kind: kind, NodeIn: 2, EdgeIn: 3, Hidden: H, Layers: 2, Classes: 2, ReverseMP: true, EdgeUpdates: true}
		m, err := NewModel(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		b := testBatch(t, rng, 12, 40, 4, []int{2, 2}, 2, 3)
		n := b.NumNodes[2]
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		ovs := []EmbeddingOverride{{Layer: 2, Rows: rows, Values: randTensor(rng, n, H)}}
		logits := m.Forward(b, ovs, false, nil).Clone()
		gnn.ZeroGrad(m.Params())
		m.Backward(logits) // any gradient
		for _, p := range m.Params() {
			if strings.HasPrefix(p.Name, "head.") {
				continue
			}
			for _, g := range p.G.Data {
				if g != 0 {
					t.Fatalf("%s: %s receives gradient %v through overridden rows", kind, p.Name, g)
				}
			}
		}
		// Changing anything below the head leaves the logits unchanged.
		for i := range b.NodeX.Data {
			b.NodeX.Data[i] += 1
		}
		if got := m.Forward(b, ovs, false, nil); !equalTensors(got, logits) {
			t.Errorf("%s: logits depend on overridden computation", kind)
		}
	}
}

func equalTensors(a, b *gnn.Tensor) bool {
	if !a.SameShape(b) {
		return false
	}
	for i, v := range a.Data {
		if b.Data[i] != v {
			return false
		}
	}
	return true
}

// edgeFDStep is the central-difference step of the edge tests: smaller
// than fdStep because the edge model stacks more ReLUs (messages, edge
// updates, MLPs, head), whose kinks a larger step crosses.
const edgeFDStep = 1e-3

// edgeKinkStep is the step of checkGradKinks, which detects kinks
// explicitly: a smaller step leaves more of the loss's float32 rounding
// noise in the difference (about ±2e-3 at 1e-4 on the layer tests), a
// larger one straddles more kinks, whose elements are then skipped.
const edgeKinkStep = 3e-3
