package gnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/graph"
)

// Finite-difference gradient tests: every operation and layer, through a
// scalar loss Σ out⊙R (R random) or the cross-entropy itself, against the
// hand-written backward passes. Tolerances: see checkGrad.

func TestGradMatMul(t *testing.T) {
	rng := newRNG(10)
	for _, s := range []struct{ m, k, n int }{{1, 1, 1}, {3, 4, 5}, {7, 16, 7}, {12, 9, 16}} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(t *testing.T) {
			// out = a·b; dA = R·bᵀ (MatMulNT), dB = aᵀ·R (MatMulTN).
			a, b, r := randTensor(rng, s.m, s.k), randTensor(rng, s.k, s.n), randTensor(rng, s.m, s.n)
			out := New(s.m, s.n)
			loss := func() float64 { MatMul(out, a, b); return sumProduct(out, r) }
			da, db := New(s.m, s.k), New(s.k, s.n)
			MatMulNT(da, r, b)
			MatMulTN(db, a, r)
			checkGrad(t, "a", a.Data, da.Data, loss, fdStep)
			checkGrad(t, "b", b.Data, db.Data, loss, fdStep)

			// out = aᵀ·c (MatMulTN); d(a) = c·Rᵀ, d(c) = a·R.
			c, r2 := randTensor(rng, s.m, s.n), randTensor(rng, s.k, s.n)
			out2 := New(s.k, s.n)
			loss2 := func() float64 { MatMulTN(out2, a, c); return sumProduct(out2, r2) }
			da2, dc := New(s.m, s.k), New(s.m, s.n)
			MatMulNT(da2, c, r2)
			MatMul(dc, a, r2)
			checkGrad(t, "tn a", a.Data, da2.Data, loss2, fdStep)
			checkGrad(t, "tn c", c.Data, dc.Data, loss2, fdStep)

			// out = a·eᵀ (MatMulNT), e n×k; d(a) = R·e, d(e) = Rᵀ·a.
			e, r3 := randTensor(rng, s.n, s.k), randTensor(rng, s.m, s.n)
			out3 := New(s.m, s.n)
			loss3 := func() float64 { MatMulNT(out3, a, e); return sumProduct(out3, r3) }
			da3, de := New(s.m, s.k), New(s.n, s.k)
			MatMul(da3, r3, e)
			MatMulTN(de, r3, a)
			checkGrad(t, "nt a", a.Data, da3.Data, loss3, fdStep)
			checkGrad(t, "nt e", e.Data, de.Data, loss3, fdStep)
		})
	}
}

func TestGradSparse(t *testing.T) {
	rng := newRNG(11)
	for _, s := range []struct {
		r, c, n int
		ones    bool
	}{{4, 6, 3, false}, {9, 5, 16, false}, {12, 12, 7, true}} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.r, s.c, s.n), func(t *testing.T) {
			m := randCSR(rng, s.r, s.c, 0.4, s.ones)
			sp, err := NewSparse(m)
			if err != nil {
				t.Fatal(err)
			}
			// out = M·b: d(b) = Mᵀ·R.
			b, r := randTensor(rng, s.c, s.n), randTensor(rng, s.r, s.n)
			out := New(s.r, s.n)
			db := New(s.c, s.n)
			SpMMT(db, m, r)
			checkGrad(t, "spmm b", b.Data, db.Data, func() float64 { SpMM(out, m, b); return sumProduct(out, r) }, fdStep)
			// out = Mᵀ·g: d(g) = M·R.
			g, r2 := randTensor(rng, s.r, s.n), randTensor(rng, s.c, s.n)
			out2 := New(s.c, s.n)
			dg := New(s.r, s.n)
			sp.Mul(dg, r2)
			checkGrad(t, "spmmt g", g.Data, dg.Data, func() float64 { sp.MulT(out2, g); return sumProduct(out2, r2) }, fdStep)
		})
	}
}

func TestGradElementwise(t *testing.T) {
	rng := newRNG(12)
	for _, s := range []struct{ m, n int }{{1, 1}, {5, 7}, {9, 16}} {
		t.Run(fmt.Sprintf("%dx%d", s.m, s.n), func(t *testing.T) {
			x, b, r := randTensor(rng, s.m, s.n), randTensor(rng, 1, s.n), randTensor(rng, s.m, s.n)
			out := New(s.m, s.n)
			biasLoss := func() float64 { out.Copy(x); AddBias(out, b); return sumProduct(out, r) }
			db := New(1, s.n)
			AddBiasGrad(db, r)
			checkGrad(t, "bias b", b.Data, db.Data, biasLoss, fdStep)
			checkGrad(t, "bias x", x.Data, r.Data, biasLoss, fdStep)

			// ReLU: keep inputs at least 2h away from the kink.
			for i, v := range x.Data {
				if math.Abs(float64(v)) < 3*fdStep {
					x.Data[i] = 0.5
				}
			}
			ReLU(out, x)
			dx := New(s.m, s.n)
			ReLUBackward(dx, r, out)
			checkGrad(t, "relu", x.Data, dx.Data, func() float64 { ReLU(out, x); return sumProduct(out, r) }, fdStep)

			// Dropout with a mask fixed by the seed.
			d := Dropout{P: 0.4}
			dropLoss := func() float64 { return sumProduct(d.Forward(x, true, newRNG(5)), r) }
			dropLoss()
			d.Backward(dx, r)
			checkGrad(t, "dropout", x.Data, dx.Data, dropLoss, fdStep)

			// ReLU then dropout, fused forward and backward, in
			// training and in evaluation.
			for _, train := range []bool{true, false} {
				fused := func() float64 { return sumProduct(d.ForwardReLU(x, train, newRNG(6)), r) }
				fused()
				d.BackwardReLU(dx, r, x)
				checkGrad(t, fmt.Sprintf("relu+dropout/train=%v", train), x.Data, dx.Data, fused, fdStep)
			}

			// Weight decay: gradient of (wd/2)·‖W‖².
			p := &Param{Name: "w", W: x, G: New(s.m, s.n), Decay: true}
			ApplyWeightDecay([]*Param{p}, 0.3)
			checkGrad(t, "weight decay", x.Data, p.G.Data, func() float64 {
				var s float64
				for _, v := range x.Data {
					s += 0.15 * float64(v) * float64(v)
				}
				return s
			}, fdStep)
		})
	}
}

func TestGradSoftmaxCrossEntropy(t *testing.T) {
	rng := newRNG(13)
	for _, s := range []struct {
		n, c     int
		weighted bool
		masked   bool
	}{{1, 2, false, false}, {6, 3, false, true}, {10, 7, true, true}, {8, 5, true, false}} {
		t.Run(fmt.Sprintf("%dx%d/w=%v/m=%v", s.n, s.c, s.weighted, s.masked), func(t *testing.T) {
			logits := randTensor(rng, s.n, s.c)
			logits.Scale(3)
			labels := make([]int32, s.n)
			var mask []bool
			if s.masked {
				mask = make([]bool, s.n)
			}
			for i := range labels {
				labels[i] = int32(rng.IntN(s.c))
				if mask != nil {
					mask[i] = rng.IntN(3) > 0 || i == 0
				}
				if i == s.n-1 && s.n > 1 {
					labels[i] = -1 // never counts
				}
			}
			var w []float32
			if s.weighted {
				w = make([]float32, s.c)
				for j := range w {
					w[j] = float32(0.5 + rng.Float64())
				}
			}
			grad := New(s.n, s.c)
			SoftmaxCrossEntropy(logits, labels, mask, w, grad)
			checkGrad(t, "logits", logits.Data, grad.Data, func() float64 {
				return SoftmaxCrossEntropy(logits, labels, mask, w, nil)
			}, 1e-3)
		})
	}
}

// layerCase is one layer configuration for the gradient tests.
type layerCase struct {
	name         string
	kind         string
	nt, ns       int // targets, sources
	in, out      int
	sparse       bool
	sampledBlock bool // nt < ns with a rectangular propagation block
}

var layerCases = []layerCase{
	{name: "gcn/sparse", kind: KindGCN, nt: 12, ns: 12, in: 20, out: 5, sparse: true},
	{name: "gcn/dense-project", kind: KindGCN, nt: 11, ns: 11, in: 9, out: 4},
	{name: "gcn/dense-aggregate", kind: KindGCN, nt: 11, ns: 11, in: 3, out: 8},
	{name: "gcn/block-sparse", kind: KindGCN, nt: 5, ns: 13, in: 10, out: 6, sparse: true, sampledBlock: true},
	{name: "gcn/block-dense", kind: KindGCN, nt: 5, ns: 13, in: 4, out: 9, sampledBlock: true},
	{name: "sage/sparse", kind: KindSAGE, nt: 12, ns: 12, in: 20, out: 5, sparse: true},
	{name: "sage/dense-project", kind: KindSAGE, nt: 11, ns: 11, in: 9, out: 4},
	{name: "sage/dense-aggregate", kind: KindSAGE, nt: 11, ns: 11, in: 3, out: 8},
	{name: "sage/block-sparse", kind: KindSAGE, nt: 5, ns: 13, in: 10, out: 6, sparse: true, sampledBlock: true},
	{name: "sage/block-dense-project", kind: KindSAGE, nt: 6, ns: 10, in: 7, out: 3, sampledBlock: true},
	{name: "sage/block-dense-aggregate", kind: KindSAGE, nt: 6, ns: 10, in: 3, out: 7, sampledBlock: true},
}

// testProp returns a propagation matrix for c: the kind's normalisation of
// a random graph, or a random row-normalised nt×ns block.
func testProp(t *testing.T, rng *rand.Rand, c layerCase) *Sparse {
	t.Helper()
	var m *graph.CSR
	var err error
	switch {
	case c.sampledBlock:
		// A sampled block: row-normalised weights from ns sources to nt
		// targets (MeanNorm wants square matrices).
		m = randCSR(rng, c.nt, c.ns, 0.3, false)
		for i := 0; i < m.Rows; i++ {
			_, vals := m.Row(i)
			var s float32
			for _, v := range vals {
				s += v
			}
			for k := range vals {
				vals[k] /= s
			}
		}
	case c.kind == KindGCN:
		m, err = GCNNorm(randGraph(t, rng, c.ns, 3))
	default:
		m, err = MeanNorm(randGraph(t, rng, c.ns, 3))
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSparse(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGradLayers(t *testing.T) {
	for i, c := range layerCases {
		t.Run(c.name, func(t *testing.T) {
			rng := newRNG(uint64(100 + i))
			prop := testProp(t, rng, c)
			var x Features
			if c.sparse {
				sx, err := newSparseNoT(randCSR(rng, c.ns, c.in, 0.3, false))
				if err != nil {
					t.Fatal(err)
				}
				x = SparseFeatures(sx)
			} else {
				x = DenseFeatures(randTensor(rng, c.ns, c.in))
			}
			var l Layer
			if c.kind == KindGCN {
				l = NewGCNLayer("l", c.in, c.out, true, rng)
			} else {
				l = NewSAGELayer("l", c.in, c.out, true, rng)
			}
			for _, p := range l.Params() {
				// Non-zero biases so that every term matters.
				if p.W.Rows == 1 {
					copy(p.W.Data, randTensor(rng, 1, p.W.Cols).Data)
				}
			}
			r := randTensor(rng, c.nt, c.out)
			loss := func() float64 { return sumProduct(l.Forward(prop, x), r) }
			loss()
			ZeroGrad(l.Params())
			dx := l.Backward(r)
			// Backward accumulates: a second pass doubles the gradients.
			g1 := FlattenGrad(l.Params())
			loss()
			l.Backward(r)
			for k, g := range FlattenGrad(l.Params()) {
				if math.Abs(float64(g-2*g1[k])) > 1e-5*(1+math.Abs(float64(g))) {
					t.Fatalf("gradient %d does not accumulate: %v then %v", k, g1[k], g)
				}
			}
			off := 0
			for _, p := range l.Params() {
				checkGrad(t, p.Name, p.W.Data, g1[off:off+len(p.W.Data)], loss, fdStep)
				off += len(p.W.Data)
			}
			if c.sparse {
				if dx != nil {
					t.Errorf("sparse input got an input gradient")
				}
				return
			}
			if dx == nil || dx.Rows != c.ns || dx.Cols != c.in {
				t.Fatalf("input gradient %v, want %dx%d", dx, c.ns, c.in)
			}
			checkGrad(t, "x", x.Dense.Data, dx.Clone().Data, loss, fdStep)
		})
	}
}

// TestGradModels checks whole models — sparse input dropout, stacked
// layers, ReLU, hidden dropout, cross-entropy on a node mask — against
// central differences, with dropout masks fixed by reseeding.
func TestGradModels(t *testing.T) {
	const n, f, hidden, classes = 25, 30, 6, 4
	threeLayers := func(kind string, dropout float64, rng *rand.Rand) (Model, error) {
		cfg := ModelConfig{Kind: kind, In: f, Classes: classes, Dropout: dropout}
		return NewNet(cfg,
			NewGCNLayer("c1", f, hidden, true, rng),
			NewGCNLayer("c2", hidden, 9, false, rng), // widening: aggregate first
			NewGCNLayer("c3", 9, classes, false, rng))
	}
	twoLayers := func(kind string, dropout float64, rng *rand.Rand) (Model, error) {
		return NewModel(ModelConfig{Kind: kind, In: f, Hidden: hidden, Classes: classes, Dropout: dropout}, rng)
	}
	for i, tc := range []struct {
		name  string
		kind  string
		build func(string, float64, *rand.Rand) (Model, error)
	}{
		{"gcn", KindGCN, twoLayers},
		{"sage", KindSAGE, twoLayers},
		{"gcn-3-layers", KindGCN, threeLayers},
	} {
		for _, dropout := range []float64{0, 0.5} {
			t.Run(fmt.Sprintf("%s/dropout=%v", tc.name, dropout), func(t *testing.T) {
				rng := newRNG(uint64(200 + i))
				in, err := NewInput(tc.kind, randGraph(t, rng, n, 3), randCSR(rng, n, f, 0.2, false))
				if err != nil {
					t.Fatal(err)
				}
				m, err := tc.build(tc.kind, dropout, rng)
				if err != nil {
					t.Fatal(err)
				}
				labels := make([]int32, n)
				mask := make([]bool, n)
				for v := range labels {
					labels[v] = int32(rng.IntN(classes))
					mask[v] = v%2 == 0
				}
				dLogits := New(n, classes)
				loss := func() float64 {
					return SoftmaxCrossEntropy(m.Forward(in, true, newRNG(7)), labels, mask, nil, dLogits)
				}
				loss()
				ZeroGrad(m.Params())
				m.Backward(dLogits)
				for _, p := range m.Params() {
					checkGrad(t, p.Name, p.W.Data, p.G.Clone().Data, loss, 1e-3)
				}
			})
		}
	}
}
