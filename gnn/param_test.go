package gnn

import (
	"math"
	"slices"
	"testing"
)

func TestFlattenUnflatten(t *testing.T) {
	rng := newRNG(30)
	m, err := NewGCN(ModelConfig{In: 7, Hidden: 5, Classes: 3}, rng)
	if err != nil {
		t.Fatal(err)
	}
	params := m.Params()
	if n := NumParams(params); n != 7*5+5+5*3+3 {
		t.Fatalf("NumParams = %d", n)
	}
	v := Flatten(params)
	if len(v) != NumParams(params) {
		t.Fatalf("Flatten length %d", len(v))
	}
	for i := range v {
		v[i] = float32(i)
	}
	if err := Unflatten(params, v); err != nil {
		t.Fatal(err)
	}
	if got := Flatten(params); !slices.Equal(got, v) {
		t.Errorf("round trip differs")
	}
	if params[1].W.Data[0] != 35 {
		t.Errorf("conv1.b[0] = %v, want 35 (after the 7×5 weights)", params[1].W.Data[0])
	}
	for _, tc := range []struct {
		name string
		v    []float32
	}{
		{"short", v[:len(v)-1]},
		{"long", append(slices.Clone(v), 0)},
		{"nan", func() []float32 { w := slices.Clone(v); w[3] = float32(math.NaN()); return w }()},
		{"inf", func() []float32 { w := slices.Clone(v); w[0] = float32(math.Inf(-1)); return w }()},
	} {
		before := Flatten(params)
		if err := Unflatten(params, tc.v); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
		if !slices.Equal(before, Flatten(params)) {
			t.Errorf("%s: parameters changed on error", tc.name)
		}
	}
}

func TestSchemaHash(t *testing.T) {
	rng := newRNG(31)
	build := func(cfg ModelConfig) string {
		m, err := NewModel(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		return SchemaHash(m.Params())
	}
	base := ModelConfig{Kind: KindGCN, In: 10, Hidden: 4, Classes: 3, Dropout: 0.5}
	h := build(base)
	if len(h) != 64 {
		t.Fatalf("hash %q is not hex sha256", h)
	}
	if build(base) != h {
		t.Errorf("same schema, different values: hash changed")
	}
	noDrop := base
	noDrop.Dropout = 0
	if build(noDrop) != h {
		t.Errorf("dropout is not part of the schema")
	}
	for _, other := range []ModelConfig{
		{Kind: KindSAGE, In: 10, Hidden: 4, Classes: 3},
		{Kind: KindGCN, In: 11, Hidden: 4, Classes: 3},
		{Kind: KindGCN, In: 10, Hidden: 4, Classes: 2},
	} {
		if build(other) == h {
			t.Errorf("%+v hashes like %+v", other, base)
		}
	}
	// Names count, and the encoding separates names from shapes.
	a := []*Param{NewParam("ab", 1, 2, false)}
	b := []*Param{NewParam("a", 1, 2, false)}
	if SchemaHash(a) == SchemaHash(b) {
		t.Errorf("names ignored")
	}
	t1 := []*Param{NewParam("w", 2, 3, false)}
	t2 := []*Param{NewParam("w", 3, 2, false)}
	if SchemaHash(t1) == SchemaHash(t2) {
		t.Errorf("transposed shapes collide")
	}
}

func TestGlorot(t *testing.T) {
	p := NewParam("w", 200, 50, true)
	p.Glorot(newRNG(32))
	limit := math.Sqrt(6.0 / 250)
	var s, s2 float64
	for _, v := range p.W.Data {
		if math.Abs(float64(v)) > limit {
			t.Fatalf("value %v beyond ±%v", v, limit)
		}
		s += float64(v)
		s2 += float64(v) * float64(v)
	}
	n := float64(len(p.W.Data))
	if mean, variance := s/n, s2/n; math.Abs(mean) > 0.01 || math.Abs(variance-limit*limit/3) > 0.1*limit*limit/3 {
		t.Errorf("mean %v variance %v, want 0 and %v", mean, variance, limit*limit/3)
	}
}
