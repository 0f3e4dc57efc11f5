package edgegnn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

func TestEdgeConfigValidate(t *testing.T) {
	ok := DefaultConfig(KindGIN)
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"default", func(*Config) {}, ""},
		{"kind", func(c *Config) { c.Kind = "pna" }, "unknown kind"},
		{"hidden", func(c *Config) { c.Hidden = 0 }, "must be positive"},
		{"layers", func(c *Config) { c.Layers = -1 }, "must be positive"},
		{"dropout", func(c *Config) { c.Dropout = 1 }, "dropout"},
	} {
		cfg := ok
		c.edit(&cfg)
		err := cfg.Validate()
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestEdgeModelSchema(t *testing.T) {
	for _, c := range []struct {
		kind     string
		headEdge bool
		want     string
	}{
		{gnn.KindSAGE, true, "enc.node enc.edge l1.node l1.edge l2.node l2.edge head.We head.phi1 head.phi2"},
		{gnn.KindGCN, false, "enc.node enc.edge l1.node l1.edge l2.node head.We head.phi1 head.phi2"},
		{KindGIN, true, "enc.node enc.edge l1.msg l1.eps l1.mlp1 l1.mlp2 l1.edge l2.msg l2.eps l2.mlp1 l2.mlp2 l2.edge head.We head.phi1 head.phi2"},
	} {
		cfg := DefaultConfig(c.kind)
		cfg.HeadEdge = c.headEdge
		m1, err := NewModel(cfg, newRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range m1.Params() {
			if n := strings.TrimSuffix(strings.TrimSuffix(p.Name, ".W"), ".b"); len(names) == 0 || names[len(names)-1] != n {
				names = append(names, n)
			}
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("%s: parameters %s, want %s", c.kind, got, c.want)
		}
		m2, _ := NewModel(cfg, newRNG(1))
		if gnn.SchemaHash(m1.Params()) != gnn.SchemaHash(m2.Params()) || !slices.Equal(gnn.Flatten(m1.Params()), gnn.Flatten(m2.Params())) {
			t.Errorf("%s: same seed, different models", c.kind)
		}
	}
}

func TestEdgeModelChecks(t *testing.T) {
	const H = 4
	rng := newRNG(90)
	cfg := Config{Kind: gnn.KindSAGE, NodeIn: 2, EdgeIn: 3, Hidden: H, Layers: 2, Classes: 2, ReverseMP: true, EdgeUpdates: true}
	m, err := NewModel(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	b := testBatch(t, rng, 12, 40, 3, []int{2, 2}, 2, 3)
	if err := m.CheckBatch(b); err != nil {
		t.Fatal(err)
	}
	b3 := testBatch(t, rng, 12, 40, 3, []int{2, 2, 2}, 2, 3)
	bx := testBatch(t, rng, 12, 40, 3, []int{2, 2}, 3, 3)
	for name, c := range map[string]*Batch{"layers": b3, "node inputs": bx} {
		if err := m.CheckBatch(c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	n2 := b.NumNodes[2]
	nan := randTensor(rng, 1, H)
	nan.Data[0] = float32(math.NaN())
	for _, c := range []struct {
		ov   EmbeddingOverride
		want string
	}{
		{EmbeddingOverride{Layer: 3, Rows: []int32{0}, Values: randTensor(rng, 1, H)}, "layer 3"},
		{EmbeddingOverride{Layer: 2, Rows: []int32{int32(n2)}, Values: randTensor(rng, 1, H)}, "outside layer 2"},
		{EmbeddingOverride{Layer: 1, Rows: []int32{0, 1}, Values: randTensor(rng, 1, H)}, "values"},
		{EmbeddingOverride{Layer: 1, Rows: []int32{0}, Values: randTensor(rng, 1, H+1)}, "values"},
		{EmbeddingOverride{Layer: 0, Rows: []int32{0}, Values: randTensor(rng, 1, H), Keep: 1.5}, "keep"},
		{EmbeddingOverride{Layer: 0, Rows: []int32{0}, Values: nan}, "not finite"},
	} {
		ovs := []EmbeddingOverride{{Layer: 0, Rows: []int32{1}, Values: randTensor(rng, 1, H)}, c.ov}
		err := m.CheckOverrides(b, ovs)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "override 1") {
			t.Errorf("%+v: error %v, want %q", c.ov, err, c.want)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("forward panic %v, want %q", r, c.want)
				}
			}()
			m.Forward(b, ovs, false, nil)
		}()
	}
}

// TestEdgeOverrideValues checks what Forward computes for overridden rows:
// replaced outright (Keep 0) after the activation, and mixed before it.
func TestEdgeOverrideValues(t *testing.T) {
	const H, gamma = 5, 0.25
	rng := newRNG(91)
	for _, kind := range []string{gnn.KindSAGE, gnn.KindGCN, KindGIN} {
		cfg := Config{Kind: kind, NodeIn: 2, EdgeIn: 3, Hidden: H, Layers: 2, Classes: 2, HeadEdge: true, ReverseMP: true, EdgeUpdates: true}
		m, err := NewModel(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		b := testBatch(t, rng, 15, 50, 4, []int{3, 3}, 2, 3)
		m.Forward(b, nil, false, nil)
		z1, h2 := m.PreActivations(1).Clone(), m.NodeEmbeddings(2).Clone()
		est, remote := randTensor(rng, 2, H), randTensor(rng, 1, H)
		ovs := []EmbeddingOverride{
			{Layer: 1, Rows: []int32{0, 2}, Values: est, Keep: gamma, Pre: true},
			{Layer: 2, Rows: []int32{1}, Values: remote},
		}
		m.Forward(b, ovs, false, nil)
		for i, r := range []int{0, 2} {
			for j := range H {
				want := (1-gamma)*est.At(i, j) + gamma*z1.At(r, j)
				if got := m.PreActivations(1).At(r, j); math.Abs(float64(got-want)) > 1e-6 {
					t.Fatalf("%s: mixed pre-activation %v, want %v", kind, got, want)
				}
				if got := m.NodeEmbeddings(1).At(r, j); got != max(m.PreActivations(1).At(r, j), 0) {
					t.Fatalf("%s: embedding %v is not ReLU of the mixed pre-activation", kind, got)
				}
			}
		}
		for j := range H {
			if got := m.NodeEmbeddings(2).At(1, j); got != remote.At(0, j) {
				t.Fatalf("%s: replaced embedding %v, want %v", kind, got, remote.At(0, j))
			}
		}
		if equalTensors(m.NodeEmbeddings(2), h2) {
			t.Fatalf("%s: layer-1 mixing did not reach layer 2", kind)
		}
	}
}

func TestTrainEdgeClassifierErrors(t *testing.T) {
	g := genWorld(worldConfig{Accounts: 50, Banks: 2, Days: 3, Normal: 200, Attempts: 3, LaundererShare: 0.2, Seed: 1})
	bad := DefaultTrainConfig(gnn.KindSAGE)
	bad.FanOut = []int{10}
	if _, _, err := TrainClassifier(g, bad, newRNG(1)); err == nil || !strings.Contains(err.Error(), "fan-out") {
		t.Errorf("fan-out for 1 of 2 layers: %v", err)
	}
	bad = DefaultTrainConfig(gnn.KindSAGE)
	bad.ClassWeights = []float32{1, 2, 3}
	if _, _, err := TrainClassifier(g, bad, newRNG(1)); err == nil || !strings.Contains(err.Error(), "class weights") {
		t.Errorf("3 class weights: %v", err)
	}
	if _, _, err := TrainClassifier(amlworld.NewGraph("empty"), DefaultTrainConfig(KindGIN), newRNG(1)); err == nil {
		t.Error("empty graph trained")
	}
}
