package cefedgnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/gnn"
	"graphfed/graph"
)

// cefedSplit generates a small CSBM graph and cuts it into clients with
// the given partitioner ("random" or "louvain").
func cefedSplit(t *testing.T, cfg graph.CSBMConfig, clients int, part string, seed uint64) ([]*graph.ClientGraph, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	d, err := graph.GenerateCSBM(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	var owner []int32
	switch part {
	case "random":
		owner, err = graph.PartitionRandom(d.N(), clients, rng)
	case "louvain":
		owner, err = graph.PartitionLouvain(d.Adj, clients, rng)
	default:
		t.Fatalf("unknown partitioner %q", part)
	}
	if err != nil {
		t.Fatal(err)
	}
	cgs, err := graph.SplitByOwner(d, owner, clients)
	if err != nil {
		t.Fatal(err)
	}
	peers := make([]string, clients)
	for i := range peers {
		peers[i] = fmt.Sprintf("bank-%d", i)
	}
	return cgs, peers
}

func smallCSBM() graph.CSBMConfig {
	return graph.CSBMConfig{Nodes: 60, Classes: 3, Features: 6, AvgDegree: 4, Homophily: 0.7, FeatureSignal: 1, TrainFrac: 0.5, ValFrac: 0.2}
}

// fillCache receives a random unit-norm embedding for every cross-client
// neighbour of l, as the gate would release them.
func fillCache(t *testing.T, l *Learner, rng *rand.Rand) {
	t.Helper()
	h := l.halo
	byOwner := make([][]int64, len(h.peers))
	for s, c := range h.owner {
		byOwner[c] = append(byOwner[c], int64(h.remote[s]))
	}
	for c, ids := range byOwner {
		if len(ids) == 0 {
			continue
		}
		rows := make([]float32, len(ids)*h.hidden)
		for k := range ids {
			row := rows[k*h.hidden : (k+1)*h.hidden]
			var s float64
			for j := range row {
				row[j] = float32(rng.NormFloat64())
				s += float64(row[j] * row[j])
			}
			for j := range row {
				row[j] /= float32(math.Sqrt(s))
			}
		}
		if err := l.Receive(h.peers[c], ids, rows, h.hidden); err != nil {
			t.Fatal(err)
		}
	}
}

// Finite differences: forward passes are float32 and the loss is summed
// in float64; see gnn's grad_test.go for the reasoning behind the
// tolerances.
const (
	cefedFDStep = 1e-3
	cefedFDRTol = 2e-2
	cefedFDATol = 1e-3
)

// checkParamGrads compares the analytic gradient in every Param.G (set by
// the caller) with central differences of objective over each element.
// objective also returns the ReLU pattern of its pass: normalize∘relu is
// only piecewise smooth (a row whose last positive unit crosses zero even
// jumps between the unit sphere and 0), so an element whose ±h passes
// differ in pattern straddles a kink, has no meaningful difference
// quotient and is skipped; at most a tenth of the elements may be.
func checkParamGrads(t *testing.T, ps []*gnn.Param, objective func() (float64, []bool)) {
	t.Helper()
	checked, skipped := 0, 0
	for _, p := range ps {
		ana := append([]float32(nil), p.G.Data...)
		for i := range p.W.Data {
			orig := p.W.Data[i]
			p.W.Data[i] = orig + cefedFDStep
			lp, pp := objective()
			p.W.Data[i] = orig - cefedFDStep
			lm, pm := objective()
			p.W.Data[i] = orig
			if !slices.Equal(pp, pm) {
				skipped++
				continue
			}
			checked++
			num := (lp - lm) / (float64(orig+cefedFDStep) - float64(orig-cefedFDStep))
			a := float64(ana[i])
			if d := math.Abs(num - a); d > cefedFDRTol*math.Max(math.Abs(num), math.Abs(a))+cefedFDATol {
				t.Errorf("%s[%d]: analytic %.6g, numeric %.6g", p.Name, i, a, num)
			}
		}
	}
	if skipped*10 > checked+skipped {
		t.Errorf("%d of %d elements straddle a ReLU kink", skipped, checked+skipped)
	}
	t.Logf("%d elements checked, %d skipped at kinks", checked, skipped)
}

// reluPattern reports which entries of t are positive.
func reluPattern(t *gnn.Tensor) []bool {
	p := make([]bool, len(t.Data))
	for i, v := range t.Data {
		p[i] = v > 0
	}
	return p
}

// TestCEFedGradient checks the hand-written backward pass of the whole
// local objective (cross-entropy + weight decay) against finite
// differences, with received remote rows in the layer-2 mean. With γ = 1
// the forward is a plain function of W. With γ < 1 the documented rule is
// the exact gradient of the step's loss with the history H̃1_prev held
// constant, so the check is against finite differences of
// W ↦ loss((1−γ)·H̃1_prev + γ·Z1(W)).
func TestCEFedGradient(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 3)
	for _, tc := range []struct {
		name    string
		gamma   float64
		history bool
	}{
		{"gamma=1", 1, false},
		{"gamma=0.3/history", 0.3, true},
		{"gamma=0.7/history", 0.7, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const wd = 0.01
			l, err := New(cgs[0], peers, Config{Hidden: 5, LR: 0.1, Gamma: tc.gamma, Beta: 1, WeightDecay: wd})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.halo.slot) == 0 {
				t.Fatal("split has no cross edges")
			}
			rng := rand.New(rand.NewPCG(9, 9))
			fillCache(t, l, rng)
			l.Init(5)
			var prev *gnn.Tensor
			if tc.history {
				prev = gnn.New(l.data.N(), l.cfg.Hidden)
				for i := range prev.Data {
					prev.Data[i] = float32(rng.NormFloat64())
				}
			}
			objective := func() (float64, []bool) {
				logits := l.net.forward(l.x, l.local, l.halo.propagation(), l.halo.cache, prev, l.cfg.Gamma, false, l.rng)
				loss := gnn.SoftmaxCrossEntropy(logits, l.data.Labels, l.train, nil, nil)
				for _, p := range l.ps {
					if p.Decay {
						for _, w := range p.W.Data {
							loss += wd / 2 * float64(w) * float64(w)
						}
					}
				}
				return loss, reluPattern(l.net.ht)
			}
			l.lossGrad(prev, false)
			checkParamGrads(t, l.ps, objective)
		})
	}
}

// TestCEFedGradientGammaScaling: when the history equals the fresh value
// (H̃1_prev = Z1(W)), the forward is the same for every γ, the layer-2
// gradients do not depend on γ and the layer-1 gradients are exactly γ
// times those of γ = 1 (the gradient flows through the γ-weighted fresh
// term only).
func TestCEFedGradientGammaScaling(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 4)
	grads := func(gamma float64) (l1, l2 []float32) {
		l, err := New(cgs[1], peers, Config{Hidden: 5, Gamma: gamma, WeightDecay: 0})
		if err != nil {
			t.Fatal(err)
		}
		fillCache(t, l, rand.New(rand.NewPCG(2, 2)))
		l.Init(11)
		l.lossGrad(nil, false)
		prev := l.net.ht.Clone() // = Z1(W)
		l.lossGrad(prev, false)
		g := gnn.FlattenGrad(l.ps)
		n1 := gnn.NumParams(l.net.l1.Params())
		return g[:n1], g[n1:]
	}
	a1, a2 := grads(1)
	for _, gamma := range []float64{0.2, 0.5, 0.9} {
		b1, b2 := grads(gamma)
		for i := range a1 {
			if want := float32(gamma) * a1[i]; math.Abs(float64(b1[i]-want)) > 1e-6+1e-4*math.Abs(float64(want)) {
				t.Fatalf("γ=%v: layer-1 grad[%d] = %g, want γ·%g = %g", gamma, i, b1[i], a1[i], want)
			}
		}
		for i := range a2 {
			if math.Abs(float64(b2[i]-a2[i])) > 1e-6+1e-4*math.Abs(float64(a2[i])) {
				t.Fatalf("γ=%v: layer-2 grad[%d] = %g, want %g", gamma, i, b2[i], a2[i])
			}
		}
	}
}

// fedResult is the outcome of cefedSimulate.
type fedResult struct {
	meanAcc, pooledAcc, meanF1 float64
	perClient                  []float64
	learners                   []*Learner
}

// cefedSimulate runs Algorithm 1 in memory, without a bus: every round each
// client takes k local steps, the server averages parameters and gradient
// estimators uniformly (Algorithm 1, line 6) and sends them back, and, with
// exchange set, every client releases its boundary embeddings to each
// neighbour (no noise: the gate's normalization is the identity on the
// already normalized rows). It returns the final scores.
func cefedSimulate(t *testing.T, cgs []*graph.ClientGraph, peers []string, cfg Config, rounds, k int, exchange bool) fedResult {
	t.Helper()
	ls := make([]*Learner, len(cgs))
	index := map[string]int{}
	for i, cg := range cgs {
		c := cfg
		c.Seed = cfg.Seed + uint64(i)
		l, err := New(cg, peers, c)
		if err != nil {
			t.Fatal(err)
		}
		l.Init(1)
		ls[i] = l
		index[peers[i]] = i
	}
	n := ls[0].NumParams()
	for range rounds {
		avgW, avgG := make([]float64, n), make([]float64, n)
		for _, l := range ls {
			l.Train(k)
			for j, v := range l.Params() {
				avgW[j] += float64(v) / float64(len(ls))
			}
			for j, v := range l.Grad() {
				avgG[j] += float64(v) / float64(len(ls))
			}
		}
		w, g := make([]float32, n), make([]float32, n)
		for j := range w {
			w[j], g[j] = float32(avgW[j]), float32(avgG[j])
		}
		for _, l := range ls {
			if err := l.SetParams(w); err != nil {
				t.Fatal(err)
			}
			if err := l.SetGrad(g); err != nil {
				t.Fatal(err)
			}
		}
		if !exchange {
			continue
		}
		for i, l := range ls {
			for _, to := range l.Neighbours() {
				ids, rows, dim := l.Boundary(to)
				if err := ls[index[to]].Receive(peers[i], ids, rows, dim); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	res := fedResult{learners: ls}
	var correct, total float64
	for _, l := range ls {
		ev := l.Evaluate()
		res.perClient = append(res.perClient, ev["test_acc"])
		res.meanAcc += ev["test_acc"] / float64(len(ls))
		res.meanF1 += ev["test_macro_f1"] / float64(len(ls))
		correct += ev["test_acc"] * ev["test_n"]
		total += ev["test_n"]
	}
	res.pooledAcc = correct / total
	return res
}

// TestCEFedGradientDropout repeats the γ = 1 check in training mode with
// dropout on the layer-2 input, the mask fixed by reseeding the learner's
// generator before every pass.
func TestCEFedGradientDropout(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 5)
	l, err := New(cgs[0], peers, Config{Hidden: 6, Gamma: 1, Beta: 1, Dropout: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	fillCache(t, l, rand.New(rand.NewPCG(3, 3)))
	l.Init(2)
	reseed := func() { l.rng = rand.New(rand.NewPCG(77, 0)) }
	objective := func() (float64, []bool) {
		reseed()
		logits := l.net.forward(l.x, l.local, l.halo.propagation(), l.halo.cache, nil, 1, true, l.rng)
		return gnn.SoftmaxCrossEntropy(logits, l.data.Labels, l.train, nil, nil), reluPattern(l.net.ht)
	}
	reseed()
	l.lossGrad(nil, true)
	checkParamGrads(t, l.ps, objective)
}

// TestCEFedStep checks one local step against Eq. 9 and the update
// W ← W − η·G: G' = (1−β)·G + β·∇, W' = W − η·G', for the paper's β and
// for β = 1 (plain SGD).
func TestCEFedStep(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 6)
	for _, tc := range []struct {
		name       string
		beta, wd   float64
		startGrads bool
	}{
		{"sgd", 1, 0, false},
		{"beta=0.9", 0.9, 0, true},
		{"beta=0.5/decay", 0.5, 0.01, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const eta = 0.3
			l, err := New(cgs[0], peers, Config{Hidden: 4, LR: eta, Gamma: 0.5, Beta: tc.beta, WeightDecay: tc.wd})
			if err != nil {
				t.Fatal(err)
			}
			l.Init(3)
			l.Train(2) // a history and a non-zero G
			g0 := l.Grad()
			if !tc.startGrads {
				g0 = make([]float32, len(g0))
				if err := l.SetGrad(g0); err != nil {
					t.Fatal(err)
				}
			}
			w0 := l.Params()
			l.lossGrad(l.ht, true) // ∇ at W, from the same history
			grad := gnn.FlattenGrad(l.ps)
			if err := l.SetParams(w0); err != nil {
				t.Fatal(err)
			}
			l.Train(1)
			w1, g1 := l.Params(), l.Grad()
			for j := range w0 {
				wantG := float32(1-tc.beta)*g0[j] + float32(tc.beta)*grad[j]
				wantW := w0[j] - eta*wantG
				if math.Abs(float64(g1[j]-wantG)) > 1e-6 || math.Abs(float64(w1[j]-wantW)) > 1e-6 {
					t.Fatalf("element %d: G %g W %g, want %g and %g", j, g1[j], w1[j], wantG, wantW)
				}
			}
		})
	}
}

// TestCEFedExchange: a two-client split of a generated graph. A's
// boundary towards B is exactly its nodes with a cross edge to B, with
// unit-norm H1 rows; after B receives them, B's logits change for the
// nodes adjacent to A and for no other node.
func TestCEFedExchange(t *testing.T) {
	cfg := smallCSBM()
	cfg.Nodes = 120
	cgs, peers := cefedSplit(t, cfg, 2, "louvain", 7)
	mk := func(i int) *Learner {
		l, err := New(cgs[i], peers, Config{Hidden: 8, Dropout: 0.5, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		l.Init(1)
		return l
	}
	a, b := mk(0), mk(1)
	if got := a.Neighbours(); !slices.Equal(got, []string{"bank-1"}) {
		t.Fatalf("A's neighbours %v, want [bank-1]", got)
	}
	if got := b.Neighbours(); !slices.Equal(got, []string{"bank-0"}) {
		t.Fatalf("B's neighbours %v, want [bank-0]", got)
	}
	a.Train(3)

	var want []int64
	for _, e := range cgs[0].Cross {
		want = append(want, int64(cgs[0].Global[e.Local]))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	ids, rows, dim := a.Boundary("bank-1")
	if !slices.Equal(ids, want) {
		t.Fatalf("boundary ids %v, want %v", ids, want)
	}
	if dim != 8 || len(rows) != len(ids)*dim {
		t.Fatalf("boundary has %d values of width %d for %d ids", len(rows), dim, len(ids))
	}
	for k := range ids {
		var s float64
		for _, v := range rows[k*dim : (k+1)*dim] {
			s += float64(v) * float64(v)
		}
		if s != 0 && math.Abs(s-1) > 1e-5 {
			t.Fatalf("boundary row %d has squared norm %v, want 1 (or 0)", k, s)
		}
	}
	if ids, rows, _ := a.Boundary("bank-9"); ids != nil || rows != nil {
		t.Fatalf("boundary towards an unknown client: %v", ids)
	}

	before := b.logits().Clone()
	adjacent := map[int32]bool{}
	for _, e := range cgs[1].Cross {
		adjacent[e.Local] = true
	}
	if err := b.Receive("bank-0", ids, rows, dim); err != nil {
		t.Fatal(err)
	}
	after := b.logits()
	changed := 0
	for v := range before.Rows {
		diff := !slices.Equal(before.Row(v), after.Row(v))
		if diff && !adjacent[int32(v)] {
			t.Fatalf("node %d is not adjacent to A but its logits changed", v)
		}
		if diff {
			changed++
		}
	}
	if changed != len(adjacent) {
		t.Fatalf("%d of the %d nodes adjacent to A changed", changed, len(adjacent))
	}
	t.Logf("A released %d boundary rows; %d nodes of B changed", len(ids), changed)
}

// TestCEFedReceive covers what Receive rejects and what it ignores.
func TestCEFedReceive(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 3, "random", 8)
	l, err := New(cgs[0], peers, Config{Hidden: 3})
	if err != nil {
		t.Fatal(err)
	}
	h := l.halo
	if len(h.remote) < 2 {
		t.Fatal("split has too few cross edges")
	}
	own := int64(cgs[0].Global[0])
	g, owner := int64(h.remote[0]), peers[h.owner[0]]
	other := peers[1]
	if owner == other {
		other = peers[2]
	}
	for _, tc := range []struct {
		name    string
		from    string
		ids     []int64
		rows    []float32
		dim     int
		wantErr bool
		stored  bool
	}{
		{"stored", owner, []int64{g}, []float32{1, 0, 0}, 3, false, true},
		{"wrong dim", owner, []int64{g}, []float32{1, 0}, 2, true, false},
		{"wrong length", owner, []int64{g}, []float32{1, 0}, 3, true, false},
		{"not finite", owner, []int64{g}, []float32{1, float32(math.NaN()), 0}, 3, true, false},
		{"wrong sender", other, []int64{g}, []float32{1, 0, 0}, 3, false, false},
		{"unknown sender", "bank-x", []int64{g}, []float32{1, 0, 0}, 3, false, false},
		{"not a neighbour", owner, []int64{own, 1 << 40}, []float32{1, 0, 0, 0, 1, 0}, 3, false, false},
		{"empty", owner, nil, nil, 3, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(h.have)
			h.cache.Zero()
			h.prop = nil
			err := l.Receive(tc.from, tc.ids, tc.rows, tc.dim)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if h.have[0] != tc.stored {
				t.Fatalf("stored %v, want %v", h.have[0], tc.stored)
			}
			if tc.stored && !slices.Equal(h.cache.Row(0), tc.rows) {
				t.Fatalf("cached row %v, want %v", h.cache.Row(0), tc.rows)
			}
			if !tc.stored && slices.ContainsFunc(h.have, func(b bool) bool { return b }) {
				t.Fatal("a row was stored")
			}
		})
	}
}

// TestCEFedParams covers the flat vectors: equal schemas and equal
// initial parameters across clients, round trips, and rejected lengths.
func TestCEFedParams(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 9)
	a, err := New(cgs[0], peers, Config{Hidden: 7, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cgs[1], peers, Config{Hidden: 7, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cgs[1], peers, Config{Hidden: 8})
	if err != nil {
		t.Fatal(err)
	}
	if a.SchemaHash() != b.SchemaHash() {
		t.Fatal("clients with the same configuration disagree on the schema")
	}
	if a.SchemaHash() == c.SchemaHash() {
		t.Fatal("different hidden widths share a schema")
	}
	f, h, k := smallCSBM().Features, 7, smallCSBM().Classes
	if want := 2*f*h + h + 2*h*k + k; a.NumParams() != want || len(a.Params()) != want || len(a.Grad()) != want {
		t.Fatalf("NumParams %d, Params %d, Grad %d, want %d", a.NumParams(), len(a.Params()), len(a.Grad()), want)
	}
	a.Init(42)
	b.Init(42)
	if !slices.Equal(a.Params(), b.Params()) {
		t.Fatal("Init with the same seed gave different parameters")
	}
	a.Train(3)
	if slices.Equal(a.Params(), b.Params()) || slices.Equal(a.Grad(), make([]float32, a.NumParams())) {
		t.Fatal("training changed neither the parameters nor G")
	}
	if err := b.SetParams(a.Params()); err != nil {
		t.Fatal(err)
	}
	if err := b.SetGrad(a.Grad()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Params(), b.Params()) || !slices.Equal(a.Grad(), b.Grad()) {
		t.Fatal("round trip changed the vectors")
	}
	a.Init(42)
	if slices.ContainsFunc(a.Grad(), func(v float32) bool { return v != 0 }) || a.ht != nil {
		t.Fatal("Init kept G or the embedding history")
	}

	n := a.NumParams()
	nan := make([]float32, n)
	nan[n-1] = float32(math.Inf(1))
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"short", make([]float32, n-1)},
		{"long", make([]float32, n+1)},
		{"empty", nil},
		{"not finite", nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, g := b.Params(), b.Grad()
			if err := b.SetParams(tc.v); err == nil {
				t.Error("SetParams accepted it")
			}
			if err := b.SetGrad(tc.v); err == nil {
				t.Error("SetGrad accepted it")
			}
			if !slices.Equal(w, b.Params()) || !slices.Equal(g, b.Grad()) {
				t.Error("a rejected vector changed the learner")
			}
		})
	}
}

// TestCEFedConfig covers defaults, the variants and rejected settings.
func TestCEFedConfig(t *testing.T) {
	cgs, peers := cefedSplit(t, smallCSBM(), 2, "random", 10)
	l, err := New(cgs[0], peers, Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.WeightDecay, want.Dropout = 0, 0 // zero means none for these two
	if got := l.Config(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	st, err := New(cgs[0], peers, Config{Variant: VariantFedGNNST, Gamma: 0.3, Beta: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Config(); c.Gamma != 1 || c.Beta != 1 {
		t.Fatalf("fedgnn-st has γ=%v β=%v, want 1 and 1", c.Gamma, c.Beta)
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		peers []string
	}{
		{"variant", Config{Variant: "fedprox"}, peers},
		{"gamma", Config{Gamma: 1.5}, peers},
		{"beta", Config{Beta: -0.1}, peers},
		{"lr", Config{LR: math.NaN()}, peers},
		{"dropout", Config{Dropout: 1}, peers},
		{"weight decay", Config{WeightDecay: -1}, peers},
		{"hidden", Config{Hidden: -2}, peers},
		{"missing peer", Config{}, peers[:1]},
		{"duplicate peer", Config{}, []string{"bank-0", "bank-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(cgs[0], tc.peers, tc.cfg); err == nil {
				t.Fatal("accepted")
			} else {
				t.Log(err)
			}
		})
	}
}
