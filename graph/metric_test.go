package graph

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDatasetMetric checks that meta.json's metric survives loading, the
// random LCC split and both partitioners, since every client scores by it.
func TestDatasetMetric(t *testing.T) {
	for _, tt := range []struct{ name, want string }{{"minesweeper", MetricROCAUC}, {"chameleon", MetricAccuracy}, {"cora", MetricAccuracy}} {
		d, err := LoadTSV(sharedDataset(t, tt.name))
		if err != nil {
			t.Fatal(err)
		}
		if d.ScoreMetric() != tt.want {
			t.Fatalf("%s: metric %q, want %q", tt.name, d.ScoreMetric(), tt.want)
		}
		s, err := ApplySplit(d, SplitSpec{Kind: "random", Train: 0.2, Val: 0.4, Test: 0.4}, 1)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := PartitionRandom(s.N(), 3, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		parts, err := SplitByOwner(s, owner, 3)
		if err != nil {
			t.Fatal(err)
		}
		members, err := PartitionMetisOverlap(s.Adj, 5, MetisOptions{}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		over, err := SplitByMembers(s, members)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range append(parts, over...) {
			if cg.Data.ScoreMetric() != tt.want {
				t.Fatalf("%s: client %d scores by %q, want %q", tt.name, cg.Client, cg.Data.ScoreMetric(), tt.want)
			}
		}
	}
}

func TestParseMetaMetric(t *testing.T) {
	for _, tt := range []struct{ meta, err string }{
		{`{"nodes":1,"features":1,"classes":2,"metric":"roc_auc"}`, ""},
		{`{"nodes":1,"features":1,"classes":3,"metric":"accuracy"}`, ""},
		{`{"nodes":1,"features":1,"classes":3,"metric":"roc_auc"}`, "needs 2 classes"},
		{`{"nodes":1,"features":1,"classes":2,"metric":"f1"}`, "unknown metric"},
	} {
		_, err := parseMeta([]byte(tt.meta))
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: error %v, want %q", tt.meta, err, tt.err)
		}
	}
}
