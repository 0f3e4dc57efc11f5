package main

import (
	"path/filepath"
	"testing"
)

// TestTrainLightGCN generates a recommendation dataset with `gen rec`,
// trains `train --lightgcn` on it for a few epochs with every LightGCN
// flag, and checks the report: the best figures, their epoch, the curve
// and the settings in force.
func TestTrainLightGCN(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	if _, err := runAMLCmd(t, "gen", "rec", "--users", "300", "--items", "400", "--seed", "5", "--out", dir); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		epochs float64
		points int
		lrs    []float64 // the curve's rates
	}{
		{"every flag", []string{"--epochs", "4", "--eval-every", "2", "--batch", "512", "--layers", "2", "--dim", "16",
			"--lr", "0.01", "--reg", "1e-3", "--seed", "3", "--lr-schedule", "step", "--lr-decay", "0.5", "--lr-decay-epochs", "3"}, 4, 2, []float64{0.01, 0.005}},
		{"decay epochs alone", []string{"--epochs", "2", "--eval-every", "1", "--dim", "8", "--lr", "0.01", "--lr-decay-epochs", "1"}, 2, 2, []float64{0.01, 0.001}},
		{"cosine", []string{"--epochs", "2", "--eval-every", "1", "--dim", "8", "--lr", "0.01", "--lr-schedule", "cosine", "--lr-decay", "0"}, 2, 2, []float64{0.01, 0.005}},
		{"defaults but epochs", []string{"--epochs", "1", "--dim", "8"}, 1, 1, []float64{0.001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := executeForReport(t, trainCmdRoot(append([]string{"train", "--lightgcn", dir, "--json"}, tc.args...)...))
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Metrics
			if rep.Algo != "lightgcn" || rep.Dataset != "rec" || m["epochs"] != tc.epochs {
				t.Fatalf("report %+v", rep)
			}
			r, ok := m["recall_at_20"].(float64)
			if n, ok2 := m["ndcg_at_20"].(float64); !ok || !ok2 || r <= 0 || r > 1 || n <= 0 || n > 1 {
				t.Fatalf("recall@20 %v ndcg@20 %v", m["recall_at_20"], m["ndcg_at_20"])
			}
			if c, ok := m["curve"].([]any); !ok || len(c) != tc.points || m["best_epoch"].(float64) < 1 || m["epoch_seconds"].(float64) <= 0 {
				t.Fatalf("curve %v, best epoch %v, %v s per epoch", m["curve"], m["best_epoch"], m["epoch_seconds"])
			}
			for k, p := range m["curve"].([]any) {
				if lr := p.(map[string]any)["lr"]; lr != tc.lrs[k] {
					t.Errorf("curve point %d: lr %v, want %v", k, lr, tc.lrs[k])
				}
			}
		})
	}
}

// TestTrainLightGCNErrors checks that bad settings and a missing
// directory fail with the cause.
func TestTrainLightGCNErrors(t *testing.T) {
	for _, args := range [][]string{
		{"train", "--lightgcn", filepath.Join(t.TempDir(), "absent")},
		{"train", "--lightgcn", t.TempDir(), "--dim", "0"},
		{"train", "--lightgcn", t.TempDir(), "--lr-schedule", "linear"},
		{"train", "--lightgcn", t.TempDir(), "--lr-decay-epochs", "100,50"},
		{"train", "--lightgcn", t.TempDir(), "--lr-decay-epochs", "100", "--lr-decay", "1.5"},
		{"train", "--lightgcn", t.TempDir(), "--lr-schedule", "cosine", "--lr-decay-epochs", "100"},
	} {
		if _, err := executeForReport(t, trainCmdRoot(args...)); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
