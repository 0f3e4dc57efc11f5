package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDegreeSummary(t *testing.T) {
	for _, tc := range []struct {
		deg  []int
		want map[string]any
	}{
		{nil, map[string]any{"mean": 0, "median": 0, "p90": 0, "max": 0}},
		{[]int{3}, map[string]any{"mean": 3.0, "median": 3, "p90": 3, "max": 3}},
		{[]int{5, 1, 2, 4, 3, 6, 7, 8, 9, 10}, map[string]any{"mean": 5.5, "median": 6, "p90": 10, "max": 10}},
	} {
		got := degreeSummary(tc.deg)
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%v: %s = %v, want %v", tc.deg, k, got[k], v)
			}
		}
	}
	if ratio64(1, 0) != 0 || ratio64(1, 4) != 0.25 {
		t.Error("ratio64")
	}
}

// TestDataStats summarises each kind of dataset and refuses other than
// exactly one.
func TestDataStats(t *testing.T) {
	rec := t.TempDir()
	for name, body := range map[string]string{"train.txt": "0 0 1 2\n1 1\n2 2 3\n", "test.txt": "0 3\n1 2 0\n"} {
		if err := os.WriteFile(filepath.Join(rec, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tiny := filepath.Join("..", "graph", "testdata", "tsv", "tiny")
	for _, tc := range []struct {
		name string
		spec DataStatsSpec
		key  string // a metric the report holds
		err  string
	}{
		{"lightgcn", DataStatsSpec{LightGCN: rec}, "density", ""},
		{"dataset", DataStatsSpec{Dataset: tiny}, "nodes", ""},
		{"none", DataStatsSpec{}, "", "exactly one"},
		{"two", DataStatsSpec{LightGCN: rec, Dataset: tiny}, "", "exactly one"},
		{"missing aml", DataStatsSpec{AML: filepath.Join(rec, "none_Trans.csv")}, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DataStats(context.Background(), tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.Metrics[tc.key]; !ok {
				t.Errorf("metrics %v lack %s", r.Metrics, tc.key)
			}
		})
	}
}
