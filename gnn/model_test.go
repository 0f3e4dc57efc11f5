package gnn

import (
	"slices"
	"strings"
	"testing"
)

func TestModelConfigValidate(t *testing.T) {
	ok := ModelConfig{Kind: KindGCN, In: 5, Hidden: 4, Classes: 3, Dropout: 0.5}
	for _, tc := range []struct {
		name string
		edit func(*ModelConfig)
		want string
	}{
		{"kind", func(c *ModelConfig) { c.Kind = "gat" }, "unknown kind"},
		{"in", func(c *ModelConfig) { c.In = 0 }, "dimensions"},
		{"hidden", func(c *ModelConfig) { c.Hidden = -1 }, "dimensions"},
		{"classes", func(c *ModelConfig) { c.Classes = 0 }, "dimensions"},
		{"dropout one", func(c *ModelConfig) { c.Dropout = 1 }, "dropout"},
		{"dropout negative", func(c *ModelConfig) { c.Dropout = -0.1 }, "dropout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			m, err := NewModel(c, newRNG(1))
			if err == nil || !strings.Contains(err.Error(), tc.want) || m != nil {
				t.Errorf("model %v, error %v; want nil and an error mentioning %q", m, err, tc.want)
			}
		})
	}
	if _, err := NewModel(ok, newRNG(1)); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestModelParams(t *testing.T) {
	type shape struct {
		name  string
		r, c  int
		decay bool
	}
	for _, tc := range []struct {
		kind string
		want []shape
	}{
		{KindGCN, []shape{{"conv1.W", 9, 4, true}, {"conv1.b", 1, 4, false}, {"conv2.W", 4, 3, false}, {"conv2.b", 1, 3, false}}},
		{KindSAGE, []shape{
			{"sage1.W_self", 9, 4, true}, {"sage1.W_neigh", 9, 4, true}, {"sage1.b", 1, 4, false},
			{"sage2.W_self", 4, 3, false}, {"sage2.W_neigh", 4, 3, false}, {"sage2.b", 1, 3, false},
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cfg := ModelConfig{Kind: tc.kind, In: 9, Hidden: 4, Classes: 3, Dropout: 0.5}
			m, err := NewModel(cfg, newRNG(2))
			if err != nil {
				t.Fatal(err)
			}
			if m.Config() != cfg {
				t.Errorf("config %+v", m.Config())
			}
			var got []shape
			for _, p := range m.Params() {
				got = append(got, shape{p.Name, p.W.Rows, p.W.Cols, p.Decay})
				if !p.G.SameShape(p.W) {
					t.Errorf("%s: gradient shape %v", p.Name, p.G)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("params %v, want %v", got, tc.want)
			}
			// Construction is determined by the seed.
			m2, _ := NewModel(cfg, newRNG(2))
			if !slices.Equal(Flatten(m.Params()), Flatten(m2.Params())) {
				t.Errorf("same seed, different initial parameters")
			}
		})
	}
}

func TestModelForward(t *testing.T) {
	for _, kind := range []string{KindGCN, KindSAGE} {
		t.Run(kind, func(t *testing.T) {
			rng := newRNG(3)
			const n, f = 40, 12
			in, err := NewInput(kind, randGraph(t, rng, n, 4), randCSR(rng, n, f, 0.3, false))
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewModel(ModelConfig{Kind: kind, In: f, Hidden: 8, Classes: 5, Dropout: 0.5}, rng)
			if err != nil {
				t.Fatal(err)
			}
			eval := m.Forward(in, false, nil).Clone()
			if eval.Rows != n || eval.Cols != 5 || !eval.AllFinite() {
				t.Fatalf("logits %v", eval)
			}
			if !slices.Equal(m.Forward(in, false, nil).Data, eval.Data) {
				t.Errorf("evaluation not deterministic")
			}
			a := m.Forward(in, true, newRNG(9)).Clone()
			b := m.Forward(in, true, newRNG(9)).Clone()
			c := m.Forward(in, true, newRNG(10)).Clone()
			if !slices.Equal(a.Data, b.Data) || slices.Equal(a.Data, c.Data) || slices.Equal(a.Data, eval.Data) {
				t.Errorf("training forward: same seed equal=%v, other seed equal=%v, equals eval=%v",
					slices.Equal(a.Data, b.Data), slices.Equal(a.Data, c.Data), slices.Equal(a.Data, eval.Data))
			}
			// Misuse panics with a gnn message.
			other := KindSAGE
			if kind == KindSAGE {
				other = KindGCN
			}
			wrongKind, _ := NewInput(other, randGraph(t, rng, n, 4), randCSR(rng, n, f, 0.3, false))
			wrongDim, _ := NewInput(kind, randGraph(t, rng, n, 4), randCSR(rng, n, f+1, 0.3, false))
			for name, bad := range map[string]*Input{"kind": wrongKind, "features": wrongDim} {
				func() {
					defer func() {
						if r := recover(); r == nil || !strings.HasPrefix(r.(string), "gnn: ") {
							t.Errorf("%s mismatch: recovered %v", name, r)
						}
					}()
					m.Forward(bad, false, nil)
				}()
			}
		})
	}
}

func TestNewNet(t *testing.T) {
	rng := newRNG(4)
	cfg := ModelConfig{Kind: KindGCN, In: 5, Classes: 3}
	for _, tc := range []struct {
		name   string
		layers []Layer
		want   string
	}{
		{"none", nil, "no layers"},
		{"input", []Layer{NewGCNLayer("a", 4, 3, false, rng)}, "takes 4 features"},
		{"chain", []Layer{NewGCNLayer("a", 5, 4, false, rng), NewGCNLayer("b", 3, 3, false, rng)}, "layer 2 takes 3"},
		{"classes", []Layer{NewGCNLayer("a", 5, 4, false, rng)}, "4 outputs for 3 classes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewNet(cfg, tc.layers...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	one, err := NewNet(cfg, NewGCNLayer("only", 5, 3, true, rng))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := NewInput(KindGCN, randGraph(t, rng, 8, 2), randCSR(rng, 8, 5, 0.5, false))
	if out := one.Forward(in, true, rng); out.Rows != 8 || out.Cols != 3 {
		t.Errorf("single-layer logits %v", out)
	}
	one.Backward(New(8, 3))
}
