package job

import (
	"strings"
	"testing"

	"graphfed/graph"
)

// TestPartitionDatasetMethods: every --partition value gives the promised
// client count and coverage, after a --split re-split of the generated
// graph, and unknown values are errors naming the accepted ones.
func TestPartitionDatasetMethods(t *testing.T) {
	d, _, err := LoadNodeDataset("", "csbm", graph.DefaultCSBM(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if d, err = ResplitDataset(d, "random:0.2,0.4,0.4", 1); err != nil {
		t.Fatal(err)
	}
	if tr := d.Count(graph.SplitTrain); tr < d.N()/6 || tr > d.N()/4 {
		t.Errorf("random:0.2,0.4,0.4 gave %d train nodes of %d", tr, d.N())
	}
	for _, tc := range []struct {
		method string
		nodes  func(n int) int // total nodes over clients
	}{
		{"louvain", func(n int) int { return n }},
		{"random", func(n int) int { return n }},
		{"metis", func(n int) int { return n }},
		{"metis-overlap", nil},
	} {
		cgs, err := PartitionDataset(d, 10, tc.method, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		total := 0
		for _, cg := range cgs {
			if cg.Data.N() == 0 {
				t.Errorf("%s: empty client %d", tc.method, cg.Client)
			}
			total += cg.Data.N()
		}
		if len(cgs) != 10 || tc.nodes != nil && total != tc.nodes(d.N()) {
			t.Errorf("%s: %d clients with %d nodes in all (graph has %d)", tc.method, len(cgs), total, d.N())
		}
		if tc.method == "metis-overlap" && (total < d.N()*2 || total > d.N()*3) {
			t.Errorf("metis-overlap: %d nodes in all, want about 2.5 times the graph's %d", total, d.N())
		}
	}
	if _, err := PartitionDataset(d, 10, "spectral", 1); err == nil || !strings.Contains(err.Error(), PartitionMethods) {
		t.Errorf("unknown method: error %v", err)
	}
	if _, err := ResplitDataset(d, "random:1,1,1", 1); err == nil {
		t.Error("fractions summing to 3 accepted")
	}
}
