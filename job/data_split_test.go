package job

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPartition writes one TSV directory per client of the tiny dataset.
func TestPartition(t *testing.T) {
	s := DefaultPartitionSpec()
	s.Dataset, s.Clients, s.Method, s.Out = filepath.Join("..", "graph", "testdata", "tsv", "tiny"), 2, "random", t.TempDir()
	r, err := Partition(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Dataset != "tiny" || r.Clients != 2 || r.Metrics["min_nodes"] != r.Stats.MinNodes {
		t.Errorf("%+v", r)
	}
	entries, err := os.ReadDir(s.Out)
	if err != nil || len(entries) != 2 {
		t.Errorf("%d client directories (%v)", len(entries), err)
	}
}

// TestSplitRec cuts a LightGCN dataset into clients at random.
func TestSplitRec(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"train.txt": "0 0 1 2\n1 1 3\n2 2 3\n3 0 1\n", "test.txt": "0 3\n1 2 0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := DefaultSplitRecSpec()
	s.LightGCN, s.Out, s.Clients, s.Partition = dir, filepath.Join(dir, "out"), 2, "random"
	r, err := SplitRec(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if per, ok := r.Metrics["per_client"].(map[string]any); r.Clients != 2 || !ok || len(per) != 2 {
		t.Errorf("%+v", r)
	}
}
