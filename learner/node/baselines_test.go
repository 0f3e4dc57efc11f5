package node

import (
	"math"
	"math/rand/v2"
	"testing"

	"graphfed/gnn"
	"graphfed/graph"
)

func baselineData(t *testing.T, classes int) *graph.Dataset {
	t.Helper()
	cfg := graph.DefaultCSBM()
	cfg.Nodes, cfg.Classes = 400, classes
	d, err := graph.GenerateCSBM(cfg, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestProxGradFiniteDifference checks FedProx's added gradient against
// central differences of (μ/2)·‖w − anchor‖².
func TestProxGradFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	params := []*gnn.Param{gnn.NewParam("a", 3, 4, true), gnn.NewParam("b", 1, 4, false)}
	var anchor []float32
	for _, p := range params {
		for i := range p.W.Data {
			p.W.Data[i] = float32(rng.NormFloat64())
			anchor = append(anchor, float32(rng.NormFloat64()))
		}
	}
	const mu = 0.7
	obj := func() float64 {
		var s float64
		off := 0
		for _, p := range params {
			for i, w := range p.W.Data {
				d := float64(w) - float64(anchor[off+i])
				s += mu / 2 * d * d
			}
			off += len(p.W.Data)
		}
		return s
	}
	gnn.ZeroGrad(params)
	addProxGrad(params, anchor, mu)
	const h = 1e-2
	for _, p := range params {
		for i := range p.W.Data {
			w := p.W.Data[i]
			p.W.Data[i] = w + h
			up := obj()
			p.W.Data[i] = w - h
			down := obj()
			p.W.Data[i] = w
			if fd := (up - down) / (2 * h); math.Abs(fd-float64(p.G.Data[i])) > 1e-3 {
				t.Fatalf("%s[%d]: analytic %v, finite difference %v", p.Name, i, p.G.Data[i], fd)
			}
		}
	}
}

func TestNodeBaselines(t *testing.T) {
	tests := []struct {
		name    string
		classes int
		cfg     func(*Config)
		check   func(t *testing.T, l *Learner)
	}{
		{"fedper sends no head and keeps its own", 3, func(c *Config) { c.PersonalHead = true }, func(t *testing.T, l *Learner) {
			l.Train(5)
			own := gnn.Flatten(l.model.Params())
			p := l.Params()
			if l.head == 0 || l.head >= len(p) {
				t.Fatalf("head of %d parameters out of %d", l.head, len(p))
			}
			for _, v := range p[len(p)-l.head:] {
				if v != 0 {
					t.Fatal("a head parameter left the client")
				}
			}
			in := make([]float32, len(p))
			for i := range in {
				in[i] = 0.5
			}
			if err := l.SetParams(in); err != nil {
				t.Fatal(err)
			}
			got := gnn.Flatten(l.model.Params())
			for i := range got {
				want := float32(0.5)
				if i >= len(got)-l.head {
					want = own[i]
				}
				if got[i] != want {
					t.Fatalf("param %d = %v after SetParams, want %v", i, got[i], want)
				}
			}
		}},
		{"fedprox with a strong pull stays near the received model", 3, func(c *Config) { c.Prox = 1e4 }, func(t *testing.T, l *Learner) {
			start := l.Params()
			if err := l.SetParams(start); err != nil {
				t.Fatal(err)
			}
			l.Train(20)
			free := baselineLearner(t, 3, func(*Config) {})
			free.Train(20)
			if d, f := dist(l.Params(), start), dist(free.Params(), start); d >= f/2 {
				t.Fatalf("FedProx moved %.4g from the received model, plain training %.4g", d, f)
			}
		}},
		{"roc_auc on two classes, best val tracked", 2, func(c *Config) { c.Metric = graph.MetricROCAUC }, func(t *testing.T, l *Learner) {
			if s := l.Evaluate(); !math.IsNaN(s["test_at_best_val"]) {
				t.Fatalf("best-val score before any training: %v", s["test_at_best_val"])
			}
			for i := 0; i < 30; i++ {
				l.Train(1)
			}
			s := l.Evaluate()
			if s["test_score"] <= 0.6 || s["test_score"] > 1 || s["test_score"] == s["test_acc"] {
				t.Fatalf("test AUC %v (acc %v)", s["test_score"], s["test_acc"])
			}
			if s["best_val_score"] < s["val_score"] {
				t.Fatalf("best val %v below the current val %v", s["best_val_score"], s["val_score"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, baselineLearner(t, tt.classes, tt.cfg)) })
	}
}

func TestNodeLearnerRefusesBadBaselineConfig(t *testing.T) {
	d := baselineData(t, 3)
	for _, c := range []Config{
		{Model: gnn.KindGCN, Hidden: 8, LR: 0.01, Metric: graph.MetricROCAUC},
		{Model: gnn.KindGCN, Hidden: 8, LR: 0.01, Metric: "f1"},
		{Model: gnn.KindGCN, Hidden: 8, LR: 0.01, Prox: -1},
	} {
		if _, err := New(d, c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func baselineLearner(t *testing.T, classes int, edit func(*Config)) *Learner {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Seed = 7
	edit(&cfg)
	l, err := New(baselineData(t, classes), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.Init(11)
	return l
}

func dist(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i] - b[i])
		s += d * d
	}
	return math.Sqrt(s)
}

// TestDecoupledDecayLeavesUnseenFeatures checks the first-layer weights of
// a feature no local node has: with no data gradient they may only shrink
// by the decoupled factor lr·wd a step. Kipf's L2 inside Adam moved them
// by about lr a step, which collapsed FedAvg on sparse features.
func TestDecoupledDecayLeavesUnseenFeatures(t *testing.T) {
	d := baselineData(t, 3)
	f := d.Features
	var ptr = []int{0}
	var cols []int32
	var vals []float32
	for r := 0; r < f.Rows; r++ {
		for k := f.RowPtr[r]; k < f.RowPtr[r+1]; k++ {
			if f.ColIdx[k] != 0 {
				cols, vals = append(cols, f.ColIdx[k]), append(vals, f.Val[k])
			}
		}
		ptr = append(ptr, len(cols))
	}
	d.Features = &graph.CSR{Rows: f.Rows, Cols: f.Cols, RowPtr: ptr, ColIdx: cols, Val: vals}
	cfg := DefaultConfig()
	cfg.Seed, cfg.LR, cfg.WeightDecay = 1, 0.01, 5e-4
	l, err := New(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.Init(3)
	w1 := l.model.Params()[0].W // In×Hidden: row 0 is feature 0's weights
	before := append([]float32(nil), w1.Row(0)...)
	l.Train(20)
	shrink := math.Pow(1-cfg.LR*cfg.WeightDecay, 20)
	for j, w := range w1.Row(0) {
		if want := float64(before[j]) * shrink; math.Abs(float64(w)-want) > 1e-6 {
			t.Fatalf("unseen feature's weight %d: %v after 20 steps, want %v (decay only)", j, w, want)
		}
	}
}
