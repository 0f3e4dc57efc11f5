package graph

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestEdgeHomophily(t *testing.T) {
	// Path 0-1-2-3 with labels a a b b: edges 0-1 and 2-3 are intra, 1-2 not.
	adj, err := FromEdges(4, []Edge{{0, 1}, {1, 2}, {2, 3}}, true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		labels []int32
		want   float64
	}{
		{"two of three", []int32{0, 0, 1, 1}, 2. / 3},
		{"all same", []int32{1, 1, 1, 1}, 1},
		{"alternating", []int32{0, 1, 0, 1}, 0},
		{"unlabelled end skipped", []int32{0, 0, -1, 1}, 1},
		{"nothing labelled", []int32{-1, -1, -1, -1}, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &Dataset{Adj: adj, Labels: tc.labels, Classes: 2}
			got := EdgeHomophily(d)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDegreeStats(t *testing.T) {
	star, _ := FromEdges(5, []Edge{{0, 1}, {0, 2}, {0, 3}}, true)
	tests := []struct {
		name string
		adj  *CSR
		want DegreeSummary
	}{
		{"star with isolated node", star, DegreeSummary{Min: 0, Max: 3, Mean: 6. / 5, Median: 1, Isolated: 1}},
		{"empty", &CSR{RowPtr: []int{0}}, DegreeSummary{}},
		{"even count median", mustEdges(t, 4, []Edge{{0, 1}, {0, 2}}), DegreeSummary{Min: 0, Max: 2, Mean: 1, Median: 1, Isolated: 1}},
	}
	for _, tc := range tests {
		if got := DegreeStats(tc.adj); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func mustEdges(t *testing.T, n int, edges []Edge) *CSR {
	t.Helper()
	m, err := FromEdges(n, edges, true)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDatasetStats(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	s := DatasetStats(d)
	// Edges: 0-1 (0,0) same; 0-2, 1-2 (0,1); 2-3 (1,1) same; 3-4 (1,2);
	// 4-5 (2,2) same; 5-6 (2,0); 4-7, 6-7 touch the unlabelled node 7.
	want := DatasetSummary{
		Name: "tiny", Nodes: 8, Edges: 9, Features: 5, FeatureNNZ: 16, Classes: 3,
		ClassCounts: []int{3, 2, 2}, Unlabelled: 1, Train: 3, Val: 2, Test: 2,
		EdgeHomophily: 3. / 7, LabelledEdges: 14,
		Degree: DegreeSummary{Min: 2, Max: 3, Mean: 18. / 8, Median: 2, Isolated: 0},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	d.Labels = []int32{-1, -1, -1, -1, -1, -1, -1, -1}
	if _, err := json.Marshal(DatasetStats(d)); err != nil {
		t.Errorf("summary without labelled edges does not encode: %v", err)
	}
}

func TestPartitionStats(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	// Client 0: 0,1,2,3 (edges 0-1 0-2 1-2 2-3); client 1: 4,5,6,7
	// (4-5 4-7 5-6 6-7); the cut is 3-4 alone.
	cgs, err := SplitByOwner(d, []int32{0, 0, 0, 0, 1, 1, 1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := PartitionStats(cgs)
	want := PartitionSummary{
		Clients: []ClientSummary{
			{Client: 0, Nodes: 4, Edges: 4, CrossEdges: 1, BoundaryNodes: 1, Neighbours: 1, Train: 2, Val: 2, Test: 0},
			{Client: 1, Nodes: 4, Edges: 4, CrossEdges: 1, BoundaryNodes: 1, Neighbours: 1, Train: 1, Val: 0, Test: 2},
		},
		Nodes: 8, InternalEdges: 8, CrossEdges: 1, CrossShare: 1. / 9, MinNodes: 4, MaxNodes: 4, Imbalance: 1,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	// One client alone still counts its half of the cut.
	if one := PartitionStats(cgs[:1]); one.CrossEdges != 1 || one.Nodes != 4 {
		t.Errorf("single client: %+v", one)
	}
	if empty := PartitionStats(nil); empty.MinNodes != 0 || empty.Imbalance != 0 {
		t.Errorf("no clients: %+v", empty)
	}
}
