package graph

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// updateGolden rewrites the golden files under testdata/ instead of
// comparing against them: go test ./graph/ -run Golden -update
var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/")

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func TestGenerateCSBM(t *testing.T) {
	small := func(edit func(*CSBMConfig)) CSBMConfig {
		c := DefaultCSBM()
		c.Nodes = 600
		edit(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  CSBMConfig
	}{
		{"default", DefaultCSBM()},
		{"homophilous", small(func(c *CSBMConfig) { c.Homophily = 1 })},
		{"heterophilous", small(func(c *CSBMConfig) { c.Homophily = 0.1 })},
		{"two classes", small(func(c *CSBMConfig) { c.Classes = 2; c.Homophily = 0.5 })},
		{"no edges", small(func(c *CSBMConfig) { c.AvgDegree = 0 })},
		{"one class", small(func(c *CSBMConfig) { c.Classes = 1; c.Homophily = 1 })},
		{"no signal", small(func(c *CSBMConfig) { c.FeatureSignal = 0 })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			d, err := GenerateCSBM(cfg, seeded(7))
			if err != nil {
				t.Fatal(err)
			}
			if d.N() != cfg.Nodes || d.NumFeatures() != cfg.Features || d.Classes != cfg.Classes {
				t.Fatalf("shape %d nodes %d features %d classes", d.N(), d.NumFeatures(), d.Classes)
			}
			m := int(math.Round(float64(cfg.Nodes) * cfg.AvgDegree / 2))
			if d.Adj.NNZ() != 2*m {
				t.Errorf("%d undirected edges, want exactly %d", d.Adj.NNZ()/2, m)
			}
			if err := checkSymmetric(d.Adj); err != nil {
				t.Error(err)
			}
			if m > 0 {
				want := math.Round(cfg.Homophily*float64(m)) / float64(m)
				if h := EdgeHomophily(d); math.Abs(h-want) > 1e-9 {
					t.Errorf("edge homophily %.4f, want %.4f", h, want)
				}
			}
			counts := make([]int, cfg.Classes)
			for _, y := range d.Labels {
				counts[y]++
			}
			for c, k := range counts {
				if k < cfg.Nodes/cfg.Classes || k > cfg.Nodes/cfg.Classes+1 {
					t.Errorf("class %d has %d nodes, want balanced", c, k)
				}
			}
			tr, va := d.Count(SplitTrain), d.Count(SplitVal)
			if want := cfg.TrainFrac * float64(cfg.Nodes); math.Abs(float64(tr)-want) > float64(cfg.Classes) {
				t.Errorf("%d training nodes, want about %.0f", tr, want)
			}
			if want := cfg.ValFrac * float64(cfg.Nodes); math.Abs(float64(va)-want) > float64(cfg.Classes) {
				t.Errorf("%d validation nodes, want about %.0f", va, want)
			}
			if d.Count(SplitNone) != 0 {
				t.Errorf("%d nodes without split", d.Count(SplitNone))
			}
		})
	}
}

func TestGenerateCSBMDeterministic(t *testing.T) {
	cfg := DefaultCSBM()
	cfg.Nodes = 500
	a, err := GenerateCSBM(cfg, seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateCSBM(cfg, seeded(3))
	c, _ := GenerateCSBM(cfg, seeded(4))
	if !equalDatasets(a, b) {
		t.Error("same seed gave different graphs")
	}
	if equalDatasets(a, c) {
		t.Error("different seeds gave the same graph")
	}
}

func equalDatasets(a, b *Dataset) bool {
	return slices.Equal(a.Adj.ColIdx, b.Adj.ColIdx) && slices.Equal(a.Features.Val, b.Features.Val) &&
		slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Split, b.Split)
}

func TestCSBMConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*CSBMConfig)
		want string
	}{
		{"zero classes", func(c *CSBMConfig) { c.Classes = 0 }, "0 classes"},
		{"too few nodes", func(c *CSBMConfig) { c.Nodes = 9 }, "9 nodes for 5 classes"},
		{"no features", func(c *CSBMConfig) { c.Features = 0 }, "0 features"},
		{"negative degree", func(c *CSBMConfig) { c.AvgDegree = -1 }, "average degree -1"},
		{"nan degree", func(c *CSBMConfig) { c.AvgDegree = math.NaN() }, "average degree NaN"},
		{"homophily above one", func(c *CSBMConfig) { c.Homophily = 1.5 }, "homophily 1.5"},
		{"nan homophily", func(c *CSBMConfig) { c.Homophily = math.NaN() }, "homophily NaN"},
		{"one class mixing", func(c *CSBMConfig) { c.Classes = 1 }, "1 class"},
		{"infinite signal", func(c *CSBMConfig) { c.FeatureSignal = math.Inf(1) }, "feature signal"},
		{"fractions above one", func(c *CSBMConfig) { c.TrainFrac, c.ValFrac = 0.7, 0.4 }, "train 0.7 + val 0.4"},
		{"too dense", func(c *CSBMConfig) { c.Nodes, c.AvgDegree = 20, 10 }, "too high"},
		{"too many values", func(c *CSBMConfig) { c.Features = 1 << 20 }, "exceed 2^31"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultCSBM()
			tc.edit(&cfg)
			_, err := GenerateCSBM(cfg, seeded(1))
			if err == nil || !strings.HasPrefix(err.Error(), "graph: csbm: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCSBMLearnable checks the generator's purpose without a GNN: a
// nearest-centroid classifier on twice neighbour-averaged features (SGC with
// the learned layer replaced by class means) must be far above chance, and
// clearly better than the same classifier on raw features.
func TestCSBMLearnable(t *testing.T) {
	d, err := GenerateCSBM(DefaultCSBM(), seeded(11))
	if err != nil {
		t.Fatal(err)
	}
	x := denseFeatures(d.Features)
	raw := nearestCentroidAccuracy(d, x)
	for range 2 {
		x = meanAggregate(d.Adj, x, d.NumFeatures())
	}
	graphAcc := nearestCentroidAccuracy(d, x)
	t.Logf("test accuracy: raw features %.3f, 2-hop aggregated %.3f (chance %.2f)", raw, graphAcc, 1/float64(d.Classes))
	if graphAcc < 0.85 {
		t.Errorf("aggregated accuracy %.3f, want at least 0.85", graphAcc)
	}
	if graphAcc < raw+0.2 {
		t.Errorf("graph adds too little: %.3f vs %.3f on raw features", graphAcc, raw)
	}
}

func denseFeatures(m *CSR) []float64 {
	x := make([]float64, m.Rows*m.Cols)
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k, c := range cols {
			x[i*m.Cols+int(c)] = float64(vals[k])
		}
	}
	return x
}

// meanAggregate averages each node's row with its neighbours' (D+I)^-1(A+I)X.
func meanAggregate(adj *CSR, x []float64, f int) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < adj.Rows; i++ {
		nbrs, _ := adj.Row(i)
		row := out[i*f : (i+1)*f]
		copy(row, x[i*f:(i+1)*f])
		for _, j := range nbrs {
			for k := range row {
				row[k] += x[int(j)*f+k]
			}
		}
		for k := range row {
			row[k] /= float64(len(nbrs) + 1)
		}
	}
	return out
}

func nearestCentroidAccuracy(d *Dataset, x []float64) float64 {
	f := d.NumFeatures()
	cent := make([]float64, d.Classes*f)
	count := make([]int, d.Classes)
	for v, s := range d.Split {
		if s == SplitTrain {
			y := int(d.Labels[v])
			count[y]++
			for k := 0; k < f; k++ {
				cent[y*f+k] += x[v*f+k]
			}
		}
	}
	for y := range count {
		for k := 0; k < f; k++ {
			cent[y*f+k] /= float64(max(count[y], 1))
		}
	}
	right, total := 0, 0
	for v, s := range d.Split {
		if s != SplitTest {
			continue
		}
		best, bestDist := 0, math.Inf(1)
		for y := 0; y < d.Classes; y++ {
			var dist float64
			for k := 0; k < f; k++ {
				diff := x[v*f+k] - cent[y*f+k]
				dist += diff * diff
			}
			if dist < bestDist {
				best, bestDist = y, dist
			}
		}
		total++
		if int32(best) == d.Labels[v] {
			right++
		}
	}
	return float64(right) / float64(total)
}

// TestCSBMGolden pins the generator's output for a fixed seed, so that a
// change to the sampling order (which silently changes every seeded
// experiment) is a deliberate, reviewed -update.
func TestCSBMGolden(t *testing.T) {
	cfg := CSBMConfig{Nodes: 24, Classes: 3, Features: 4, AvgDegree: 3, Homophily: 0.75, FeatureSignal: 2, TrainFrac: 0.25, ValFrac: 0.25}
	d, err := GenerateCSBM(cfg, seeded(2026))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "csbm-small")
	if *updateGolden {
		if err := WriteTSV(golden, d); err != nil {
			t.Fatal(err)
		}
	}
	got := t.TempDir()
	if err := WriteTSV(got, d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{metaFile, edgesFile, featuresFile, labelsFile, splitFile} {
		want, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		have, _ := os.ReadFile(filepath.Join(got, name))
		if string(have) != string(want) {
			t.Errorf("%s differs from %s; if the change is intended, rerun with -update", name, golden)
		}
	}
}

func BenchmarkGenerateCSBMDefault(b *testing.B) {
	rng := seeded(1)
	for b.Loop() {
		if _, err := GenerateCSBM(DefaultCSBM(), rng); err != nil {
			b.Fatal(err)
		}
	}
}
