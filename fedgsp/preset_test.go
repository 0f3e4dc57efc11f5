package fedgsp

import (
	"math"
	"slices"
	"testing"

	"graphfed/graph"
)

func TestChoose(t *testing.T) {
	// A path 0-1-2-3 with alternating train labels: every train–train edge
	// joins different classes, so ĥ = 0.
	adj := &graph.CSR{Rows: 4, Cols: 4, RowPtr: []int{0, 1, 3, 5, 6}, ColIdx: []int32{1, 0, 2, 1, 3, 2}}
	split := []graph.Split{graph.SplitTrain, graph.SplitTrain, graph.SplitTrain, graph.SplitTrain}
	data := func(name string) *graph.Dataset {
		return &graph.Dataset{Name: name, Adj: adj, Labels: []int32{0, 1, 0, 1}, Classes: 2, Split: split}
	}
	for _, tt := range []struct {
		preset, dataset, want string
		fails                 bool
	}{
		{"auto", "minesweeper/client-3", "minesweeper", false},
		{"", "tolokers", "cora", false}, // select, alone: the default row, never the name
		{"select", "actor/client-0", "cora", false},
		{"auto", "tolokers", "tolokers", false}, // legacy: by name
		{"auto", "actor/client-0", "actor", false},
		{"auto", "some-graph", "heterophilic", false}, // by ĥ = 0
		{"cora", "some-graph", "cora", false},
		{"pubmed", "cora", "pubmed", false},
		{"metis", "cora", "", true},
	} {
		name, c, err := Choose(tt.preset, data(tt.dataset))
		if tt.fails != (err != nil) || name != tt.want {
			t.Errorf("Choose(%q, %q) = %q, %v; want %q (error %v)", tt.preset, tt.dataset, name, err, tt.want, tt.fails)
		}
		if err == nil && c.Validate() != nil {
			t.Errorf("Choose(%q, %q): invalid config: %v", tt.preset, tt.dataset, c.Validate())
		}
	}
}

// TestVariants: a row's variants differ from it in the varied setting
// alone and keep its name as their base; actor's row, raw already, has no
// raw variant; the refinement steps build canonical names.
func TestVariants(t *testing.T) {
	if !slices.Equal(SelectGrid(), PresetNames()) {
		t.Fatalf("grid %v: want the rows alone (variants are refinements)", SelectGrid())
	}
	for _, name := range PresetNames() {
		base, _ := Preset(name)
		raw, okRaw := Preset(name + RawSuffix)
		slow, okSlow := Preset(name + SlowSuffix)
		both, okBoth := Preset(name + RawSuffix + SlowSuffix)
		if okRaw != !base.RawFeatures || okBoth != okRaw || !okSlow {
			t.Errorf("%s: raw %v slow %v both %v known (row raw %v)", name, okRaw, okSlow, okBoth, base.RawFeatures)
		}
		want := base
		want.LR1 *= SlowFactor
		if slow != want {
			t.Errorf("%s%s = %+v, want %+v", name, SlowSuffix, slow, want)
		}
		if okRaw {
			want := base
			want.RawFeatures = true
			if raw != want {
				t.Errorf("%s%s = %+v, want %+v", name, RawSuffix, raw, want)
			}
			want.LR1 *= SlowFactor
			if both != want {
				t.Errorf("%s%s%s = %+v, want %+v", name, RawSuffix, SlowSuffix, both, want)
			}
		}
		for _, v := range []string{name + RawSuffix, name + SlowSuffix, name + RawSuffix + SlowSuffix, name + "+slow2"} {
			if BaseName(v) != name {
				t.Errorf("BaseName(%s) = %s", v, BaseName(v))
			}
		}
		// Each decade is the rate × SlowFactor once more.
		for d, suffix := range []string{"+slow2"} {
			c, ok := Preset(name + suffix)
			want := base.LR1 * math.Pow(SlowFactor, float64(d+2))
			if !ok || math.Abs(c.LR1-want) > 1e-12*want {
				t.Errorf("%s%s: known %v, lr1 %g, want %g", name, suffix, ok, c.LR1, want)
			}
		}
	}
	for _, bad := range []string{"heterophilic+slow1", "heterophilic+slow3", "heterophilic+slow+slow", "heterophilic+slow2+raw", "heterophilic+slowx"} {
		if _, ok := Preset(bad); ok {
			t.Errorf("Preset(%s) is known", bad)
		}
	}
	for _, tt := range []struct {
		name, step, want string
		ok               bool
	}{
		{"heterophilic", RawSuffix, "heterophilic+raw", true},
		{"heterophilic", SlowSuffix, "heterophilic+slow", true},
		{"heterophilic+raw", SlowSuffix, "heterophilic+raw+slow", true},
		{"heterophilic+slow", RawSuffix, "heterophilic+raw+slow", true},
		{"heterophilic+raw+slow", SlowSuffix, "heterophilic+raw+slow2", true},
		{"heterophilic+slow2", SlowSuffix, "heterophilic+slow2", false}, // the slowest
		{"heterophilic+slow2", RawSuffix, "heterophilic+raw+slow2", true},
		{"heterophilic+raw", RawSuffix, "heterophilic+raw", false}, // nothing new
		{"actor", RawSuffix, "actor+raw", false},                   // raw already
	} {
		if got, ok := WithStep(tt.name, tt.step); got != tt.want || ok != tt.ok {
			t.Errorf("WithStep(%s, %s) = %s, %v; want %s, %v", tt.name, tt.step, got, ok, tt.want, tt.ok)
		}
	}
	lr := 0.1
	raw := true
	for _, tt := range []struct {
		o          Overrides
		rawMatters bool
		want       []string
	}{
		{Overrides{}, true, []string{RawSuffix, SlowSuffix}},
		{Overrides{}, false, []string{SlowSuffix}},
		{Overrides{LR1: &lr}, true, []string{RawSuffix}},
		{Overrides{RawFeatures: &raw, LR1: &lr}, true, nil},
	} {
		if got := Refinements(tt.o, tt.rawMatters); !slices.Equal(got, tt.want) {
			t.Errorf("Refinements(%+v, %v) = %v, want %v", tt.o, tt.rawMatters, got, tt.want)
		}
	}
	if _, _, err := Choose("heterophilic+raw+slow", nil); err != nil {
		t.Errorf("an agent cannot name a variant: %v", err)
	}
}

func TestRawVariantsMatter(t *testing.T) {
	csr := func(rowPtr []int, val []float32) *graph.CSR {
		cols := make([]int32, rowPtr[len(rowPtr)-1])
		for i := range cols {
			cols[i] = int32(i)
		}
		return &graph.CSR{Rows: len(rowPtr) - 1, Cols: len(cols), RowPtr: rowPtr, ColIdx: cols, Val: val}
	}
	for _, tt := range []struct {
		name string
		f    *graph.CSR
		want bool
	}{
		{"one-hot (minesweeper)", csr([]int{0, 1, 2, 2}, nil), false},
		{"binary bag of words (actor)", csr([]int{0, 1, 3}, nil), true},
		{"rows summing to one", csr([]int{0, 2, 3}, []float32{0.25, 0.75, 1}), false},
		{"a negative entry: never normalised", csr([]int{0, 2}, []float32{-1, 3}), false},
		{"real non-negative (tolokers)", csr([]int{0, 2}, []float32{0.8, 1}), true},
	} {
		if got := RawVariantsMatter(&graph.Dataset{Features: tt.f}); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
