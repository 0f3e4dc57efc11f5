package gnn

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

// plantedDataset is a small homophilous graph whose noisy features carry
// the class: n nodes, classes communities, 4·classes features.
func plantedDataset(tb testing.TB, seed uint64, n, classes int) *graph.Dataset {
	tb.Helper()
	rng := newRNG(seed)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % classes)
	}
	var edges []graph.Edge
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			p := 0.01
			if labels[u] == labels[v] {
				p = 0.15
			}
			if rng.Float64() < p {
				edges = append(edges, graph.Edge{U: int32(u), V: int32(v)})
			}
		}
	}
	adj, err := graph.FromEdges(n, edges, true)
	if err != nil {
		tb.Fatal(err)
	}
	f := 4 * classes
	feat := &graph.CSR{Rows: n, Cols: f, RowPtr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		for j := 0; j < f; j++ {
			// Features of the own class are on with 0.5, others with 0.1.
			p := 0.1
			if j/4 == int(labels[i]) {
				p = 0.5
			}
			if rng.Float64() < p {
				feat.ColIdx = append(feat.ColIdx, int32(j))
				feat.Val = append(feat.Val, 1)
			}
		}
		feat.RowPtr[i+1] = len(feat.ColIdx)
	}
	split := make([]graph.Split, n)
	for i := range split {
		switch {
		case i < n/5:
			split[i] = graph.SplitTrain
		case i < 2*n/5:
			split[i] = graph.SplitVal
		default:
			split[i] = graph.SplitTest
		}
	}
	labels[n-1] = -1 // one unlabelled node
	split[n-1] = graph.SplitNone
	d := &graph.Dataset{Name: "planted", Adj: adj, Features: feat, Labels: labels, Classes: classes, Split: split}
	if err := d.Validate(); err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestTrainStepLearns(t *testing.T) {
	d := plantedDataset(t, 1, 150, 3)
	for _, kind := range []string{KindGCN, KindSAGE} {
		for _, opt := range []string{"adam", "sgd"} {
			t.Run(kind+"/"+opt, func(t *testing.T) {
				rng := newRNG(2)
				in, err := NewInput(kind, d.Adj, graph.RowNormalize(d.Features))
				if err != nil {
					t.Fatal(err)
				}
				m, err := NewModel(ModelConfig{Kind: kind, In: d.NumFeatures(), Hidden: 16, Classes: 3, Dropout: 0.5}, rng)
				if err != nil {
					t.Fatal(err)
				}
				var o Optimizer = NewAdam(m.Params(), 0.01)
				if opt == "sgd" {
					o = NewSGD(m.Params(), 0.5, 0.9)
				}
				train := SplitMask(d.Split, graph.SplitTrain)
				first := TrainStep(m, in, d.Labels, train, o, 5e-4, rng)
				var last float64
				for range 100 {
					last = TrainStep(m, in, d.Labels, train, o, 5e-4, rng)
				}
				test := Evaluate(m, in, d.Labels, SplitMask(d.Split, graph.SplitTest))
				if last >= first/2 || test.Acc < 0.85 {
					t.Errorf("loss %.3f → %.3f, test %v", first, last, test)
				}
			})
		}
	}
}

// TestTrainerMatchesTrainStep checks that the buffer-keeping Trainer and
// the plain TrainStep compute the same thing.
func TestTrainerMatchesTrainStep(t *testing.T) {
	d := plantedDataset(t, 3, 80, 4)
	run := func(useTrainer bool) []float32 {
		rng := newRNG(4)
		in, _ := NewInput(KindGCN, d.Adj, d.Features)
		m, _ := NewGCN(ModelConfig{In: d.NumFeatures(), Hidden: 8, Classes: 4, Dropout: 0.3}, rng)
		opt := NewAdam(m.Params(), 0.01)
		tr := Trainer{Model: m, Opt: opt, WeightDecay: 1e-3}
		mask := SplitMask(d.Split, graph.SplitTrain)
		for range 5 {
			if useTrainer {
				tr.Step(in, d.Labels, mask, rng)
			} else {
				TrainStep(m, in, d.Labels, mask, opt, 1e-3, rng)
			}
		}
		return Flatten(m.Params())
	}
	if !slices.Equal(run(true), run(false)) {
		t.Errorf("Trainer.Step and TrainStep diverge")
	}
}

func TestTrainCentralized(t *testing.T) {
	d := plantedDataset(t, 5, 200, 4)
	cfg := DefaultTrainConfig()
	cfg.Epochs = 60
	cfg.EvalEvery = 20
	run := func(seed uint64) History {
		h, err := TrainCentralized(d, cfg, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := run(1)
	if len(h.Epochs) != 60 || h.Epochs[19].Val.Count != 40 || h.Epochs[18].Val.Count != 0 {
		t.Errorf("history: %d epochs, val counts %d at 20 and %d at 19", len(h.Epochs), h.Epochs[19].Val.Count, h.Epochs[18].Val.Count)
	}
	if h.Train.Count != 40 || h.Test.Count != 119 || h.Test.Acc < 0.8 {
		t.Errorf("final scores train %v test %v", h.Train, h.Test)
	}
	if !reflect.DeepEqual(h, run(1)) {
		t.Errorf("same seed, different history")
	}
	if reflect.DeepEqual(h, run(2)) {
		t.Errorf("different seeds, identical history")
	}

	weighted := cfg
	weighted.ClassWeights = []float32{1, 2, 1, 1}
	if _, err := TrainCentralized(d, weighted, newRNG(1)); err != nil {
		t.Errorf("class weights: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*TrainConfig)
		want string
	}{
		{"epochs", func(c *TrainConfig) { c.Epochs = 0 }, "epochs"},
		{"lr", func(c *TrainConfig) { c.LR = 0 }, "lr"},
		{"kind", func(c *TrainConfig) { c.Model = "mlp" }, "unknown"},
		{"hidden", func(c *TrainConfig) { c.Hidden = 0 }, "dimensions"},
		{"dropout", func(c *TrainConfig) { c.Dropout = 1 }, "dropout"},
		{"weights", func(c *TrainConfig) { c.ClassWeights = []float32{1} }, "class weights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.edit(&c)
			_, err := TrainCentralized(d, c, newRNG(1))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gnn: ") || strings.Count(err.Error(), "gnn:") != 1 {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	bad := *d
	bad.Labels = d.Labels[:10]
	if _, err := TrainCentralized(&bad, cfg, newRNG(1)); err == nil {
		t.Errorf("inconsistent dataset accepted")
	}
}
