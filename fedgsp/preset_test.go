package fedgsp

import (
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
