package fedgsp

import (
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

// TestRawVariants: every row that normalises its features has a
// raw-feature variant that differs from it in RawFeatures alone, in the
// default grid after every row; actor's row, raw already, has none.
func TestRawVariants(t *testing.T) {
	grid := SelectGrid()
	rows := PresetNames()
	if !slices.Equal(grid[:len(rows)], rows) {
		t.Fatalf("grid %v does not start with the rows %v", grid, rows)
	}
	for _, name := range rows {
		base, _ := Preset(name)
		v, ok := Preset(name + RawSuffix)
		if ok != !base.RawFeatures || ok != slices.Contains(grid, name+RawSuffix) {
			t.Errorf("%s: variant known %v, in the grid %v, row raw %v", name, ok, slices.Contains(grid, name+RawSuffix), base.RawFeatures)
		}
		if !ok {
			continue
		}
		base.RawFeatures = true
		if v != base {
			t.Errorf("%s%s = %+v, want the row with raw features %+v", name, RawSuffix, v, base)
		}
		if BaseName(name+RawSuffix) != name {
			t.Errorf("BaseName(%s%s) = %s", name, RawSuffix, BaseName(name+RawSuffix))
		}
	}
	if _, _, err := Choose("heterophilic"+RawSuffix, nil); err != nil {
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
