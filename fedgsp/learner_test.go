package fedgsp

import (
	"math"
	"strings"
	"testing"

	"graphfed/graph"
)

func smallConfig() Config {
	c := DefaultConfig()
	c.Orders, c.Hidden, c.Layers, c.Principal = 3, 8, 3, 2
	c.LR1, c.LR2 = 0.01, 0.01
	return c
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string // substring of the error; "" = valid
	}{
		{"default", func(*Config) {}, ""},
		{"minesweeper", func(c *Config) { *c = MinesweeperConfig() }, ""},
		{"tolokers", func(c *Config) { *c = TolokersConfig() }, ""},
		{"no orders", func(c *Config) { c.Orders = 0 }, "orders"},
		{"tau above 1", func(c *Config) { c.Tau = 1.5 }, "tau"},
		{"tau NaN", func(c *Config) { c.Tau = math.NaN() }, "tau"},
		{"one layer", func(c *Config) { c.Layers = 1 }, "dense layers"},
		{"no hidden", func(c *Config) { c.Hidden = 0 }, "hidden"},
		{"dropout 1", func(c *Config) { c.DropoutC = 1 }, "dropout C"},
		{"negative dropout M", func(c *Config) { c.DropoutM = -0.1 }, "dropout M"},
		{"zero lr1", func(c *Config) { c.LR1 = 0 }, "lr1"},
		{"infinite lr2", func(c *Config) { c.LR2 = math.Inf(1) }, "lr2"},
		{"negative wd", func(c *Config) { c.WD2 = -1 }, "weight decay"},
		{"no principal", func(c *Config) { c.Principal = 0 }, "principal"},
		{"unknown metric", func(c *Config) { c.Metric = "f1" }, "metric"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.mutate(&cfg)
			err := cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one about %q", err, c.want)
			}
		})
	}
}

func TestNewLearnerRejects(t *testing.T) {
	ds := randomDataset(t, newRNG(3), 20, 4, 3, 10, false)
	cfg := smallConfig()
	cfg.Metric = MetricROCAUC
	if _, err := NewLearner(ds, cfg); err == nil || !strings.Contains(err.Error(), "2 classes") {
		t.Fatalf("ROC-AUC on 3 classes: %v", err)
	}
	cfg = smallConfig()
	cfg.Layers = 1
	if _, err := NewLearner(ds, cfg); err == nil {
		t.Fatal("invalid config accepted")
	}
}

// TestParamsLayout: Params is [c_0 … c_K | MLP]; Init(seed) gives clients
// with different data and local seeds the same model; SetParams round-trips
// and lands the prefix in the coefficients.
func TestParamsLayout(t *testing.T) {
	cfg := smallConfig()
	a, err := NewLearner(randomDataset(t, newRNG(1), 25, 6, 3, 20, false), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 77
	b, err := NewLearner(randomDataset(t, newRNG(2), 40, 6, 3, 50, true), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.Init(5)
	b.Init(5)
	if a.SchemaHash() != b.SchemaHash() || a.NumParams() != b.NumParams() {
		t.Fatal("same config, different schema")
	}
	pa, pb := a.Params(), b.Params()
	if !equalF32(pa, pb) {
		t.Fatal("Init(5) differs between clients")
	}
	K, d := cfg.Orders, 6
	wantLen := (K+1)*d + d*cfg.Hidden + cfg.Hidden + cfg.Hidden*cfg.Hidden + cfg.Hidden + cfg.Hidden*3 + 3
	if len(pa) != wantLen || a.NumParams() != wantLen || a.CoefLen() != (K+1)*d {
		t.Fatalf("%d params (NumParams %d, CoefLen %d), want %d", len(pa), a.NumParams(), a.CoefLen(), wantLen)
	}
	for i := 0; i < (K+1)*d; i++ {
		if pa[i] != float32(1/float64(K+1)) {
			t.Fatalf("param %d = %v, want the coefficient init 1/(K+1)", i, pa[i])
		}
	}
	a.Init(6)
	if equalF32(a.Params(), pb) {
		t.Fatal("Init(6) equals Init(5)")
	}
	// Round trip, and the prefix is c_k: set c_2[3] and read it in the model.
	p := a.Params()
	p[2*d+3] = 0.625
	if err := a.SetParams(p); err != nil {
		t.Fatal(err)
	}
	if !equalF32(a.Params(), p) {
		t.Fatal("SetParams/Params round trip changed values")
	}
	if got := a.m.coef[2].W.Data[3]; got != 0.625 {
		t.Fatalf("c_2[3] = %v after setting flat index 2·d+3", got)
	}
	bad := []float32{1, 2}
	if err := a.SetParams(bad); err == nil {
		t.Fatal("short vector accepted")
	}
	p[0] = float32(math.NaN())
	if err := a.SetParams(p); err == nil {
		t.Fatal("NaN accepted")
	}
}

// TestTrainDeterministic: the same data, config and seeds give bit-equal
// parameters and scores.
func TestTrainDeterministic(t *testing.T) {
	ds := randomDataset(t, newRNG(4), 40, 6, 3, 40, false)
	run := func() ([]float32, map[string]float64) {
		cfg := smallConfig()
		cfg.Seed = 3
		l, err := NewLearner(ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		l.Init(9)
		l.Train(3)
		return l.Params(), l.Evaluate()
	}
	p1, e1 := run()
	p2, e2 := run()
	if !equalF32(p1, p2) {
		t.Fatal("parameters differ between identical runs")
	}
	for k, v := range e1 {
		if e2[k] != v {
			t.Fatalf("%s: %v vs %v", k, v, e2[k])
		}
	}
}

// TestEvaluateKeys checks the contract's keys and the best-val tracking.
func TestEvaluateKeys(t *testing.T) {
	for _, metric := range []string{MetricAccuracy, MetricROCAUC} {
		t.Run(metric, func(t *testing.T) {
			cfg := smallConfig()
			cfg.Metric = metric
			ds := randomDataset(t, newRNG(6), 60, 5, 2, 60, false)
			l, err := NewLearner(ds, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev := l.Evaluate()
			for _, k := range []string{"val_score", "test_score", "val_acc", "test_acc", "val_n", "test_n", "best_val_score", "test_at_best_val"} {
				v, ok := ev[k]
				if !ok || math.IsNaN(v) {
					t.Fatalf("key %s: %v, present %v", k, v, ok)
				}
			}
			if ev["val_n"] != float64(ds.Count(graph.SplitVal)) || ev["test_n"] != float64(ds.Count(graph.SplitTest)) {
				t.Fatalf("val_n %v test_n %v", ev["val_n"], ev["test_n"])
			}
			best := -1.0
			for range 5 {
				l.Train(1)
				ev = l.Evaluate()
				if ev["best_val_score"] < best {
					t.Fatalf("best val score fell from %v to %v", best, ev["best_val_score"])
				}
				best = ev["best_val_score"]
			}
			if metric == MetricAccuracy && ev["val_score"] != ev["val_acc"] {
				t.Fatal("accuracy metric: val_score != val_acc")
			}
		})
	}
}

// TestLearnsHeterophilousCSBM: on a strongly heterophilous CSBM graph the
// model beats chance clearly.
func TestLearnsHeterophilousCSBM(t *testing.T) {
	ds, err := graph.GenerateCSBM(graph.CSBMConfig{
		Nodes: 600, Classes: 3, Features: 16, AvgDegree: 8, Homophily: 0.1,
		FeatureSignal: 1, TrainFrac: 0.4, ValFrac: 0.2,
	}, newRNG(12))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Orders, cfg.Hidden, cfg.Tau = 4, 64, 0.7
	cfg.LR1, cfg.LR2 = 0.01, 0.05
	l, err := NewLearner(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := l.Homophily(); h > 0.3 {
		t.Fatalf("ĥ = %v on a 0.1-homophily graph", h)
	}
	l.Init(1)
	for range 100 {
		l.Train(1)
	}
	ev := l.Evaluate()
	t.Logf("test acc %.3f, test at best val %.3f", ev["test_acc"], ev["test_at_best_val"])
	if ev["test_acc"] < 1.0/3+0.25 {
		t.Fatalf("test accuracy %.3f, chance is 0.333", ev["test_acc"])
	}
}

// TestLearnsChameleonCut trains on the first 600 nodes of chameleon (the
// induced subgraph, its own split) and expects far better than chance (0.2).
func TestLearnsChameleonCut(t *testing.T) {
	ds := cut(t, sharedDataset(t, "chameleon"), 600)
	cfg := DefaultConfig()
	cfg.Orders, cfg.Hidden, cfg.Tau = 6, 64, 0.7
	cfg.LR1, cfg.LR2 = 0.01, 0.05
	l, err := NewLearner(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.Init(1)
	for range 40 {
		l.Train(1)
	}
	ev := l.Evaluate()
	t.Logf("chameleon cut: test acc %.3f, test at best val %.3f", ev["test_acc"], ev["test_at_best_val"])
	if ev["test_at_best_val"] < 0.35 {
		t.Fatalf("test accuracy at best val %.3f, chance is 0.2", ev["test_at_best_val"])
	}
}

// cut is the subgraph induced by nodes 0..n−1 of d.
func cut(t testing.TB, d *graph.Dataset, n int) *graph.Dataset {
	t.Helper()
	var edges []graph.Edge
	for _, e := range d.Adj.Edges() {
		if int(e.U) < n && int(e.V) < n {
			edges = append(edges, e)
		}
	}
	adj, err := graph.FromEdges(n, edges, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &graph.CSR{Rows: n, Cols: d.Features.Cols, RowPtr: d.Features.RowPtr[:n+1]}
	f.ColIdx = d.Features.ColIdx[:f.RowPtr[n]]
	if d.Features.Val != nil {
		f.Val = d.Features.Val[:f.RowPtr[n]]
	}
	out := &graph.Dataset{Name: d.Name + "-cut", Adj: adj, Features: f, Classes: d.Classes,
		Labels: d.Labels[:n], Split: d.Split[:n]}
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRawFeaturesAndNoBias: RawFeatures keeps B_0 = X as given (rows not
// normalised), and NoBias drops the Dense biases from the parameters.
func TestRawFeaturesAndNoBias(t *testing.T) {
	d := randomDataset(t, newRNG(3), 30, 5, 3, 20, false)
	cfg := smallConfig()
	norm, err := NewLearner(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RawFeatures, cfg.NoBias = true, true
	raw, err := NewLearner(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Stored row 0 is the first train node.
	first := -1
	for i, s := range d.Split {
		if s == graph.SplitTrain {
			first = i
			break
		}
	}
	cols, vals := d.Features.Row(first)
	for p, j := range cols {
		if got := raw.inputs[0].Row(0)[j]; got != vals[p] {
			t.Fatalf("raw B_0[0][%d] = %v, want the feature %v", j, got, vals[p])
		}
		if got, want := float64(norm.inputs[0].Row(0)[j]), float64(vals[p]); math.Abs(got-want) < 1e-9 {
			t.Fatalf("normalised B_0[0][%d] = %v equals the raw value", j, got)
		}
	}
	h, K, dim := cfg.Hidden, cfg.Orders, 5
	if want := (K+1)*dim + dim*h + h*h + h*3; raw.NumParams() != want {
		t.Fatalf("bias-free model has %d params, want %d", raw.NumParams(), want)
	}
	if norm.NumParams() != raw.NumParams()+2*h+3 {
		t.Fatalf("biased model has %d params, bias-free %d", norm.NumParams(), raw.NumParams())
	}
	raw.Init(1)
	raw.Train(2)
	if m := raw.Evaluate(); math.IsNaN(m["val_score"]) {
		t.Fatal("bias-free raw-feature learner scores NaN")
	}
}
