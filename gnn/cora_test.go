package gnn

import (
	"math/rand/v2"
	"os"
	"testing"

	"graphfed/graph"
)

// coraDir is the shared Cora dataset, relative to this package directory.
const coraDir = "../../shared/datasets/cora"

// loadCora loads Cora or skips the test when the shared datasets are absent.
func loadCora(tb testing.TB) *graph.Dataset {
	tb.Helper()
	if _, err := os.Stat(coraDir); err != nil {
		tb.Skipf("shared Cora dataset not available at %s: %v", coraDir, err)
	}
	d, err := graph.LoadTSV(coraDir)
	if err != nil {
		tb.Fatalf("load cora: %v", err)
	}
	return d
}

// TestTrainCentralizedCora reproduces Kipf & Welling's GCN on the public
// Cora split: test accuracy must reach 0.80 (the paper reports 0.815).
func TestTrainCentralizedCora(t *testing.T) {
	d := loadCora(t)
	for _, tc := range []struct {
		kind    string
		minTest float64
	}{
		{KindGCN, 0.80},
		{KindSAGE, 0.76},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cfg := DefaultTrainConfig()
			cfg.Model = tc.kind
			cfg.EvalEvery = 50
			h, err := TrainCentralized(d, cfg, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: train %v", tc.kind, h.Train)
			t.Logf("%s: val   %v", tc.kind, h.Val)
			t.Logf("%s: test  %v", tc.kind, h.Test)
			if len(h.Epochs) != cfg.Epochs || h.Epochs[49].Val.Count != 500 || h.Test.Count != 1000 {
				t.Fatalf("history: %d epochs, val count %d at epoch 50, test count %d", len(h.Epochs), h.Epochs[49].Val.Count, h.Test.Count)
			}
			if h.Epochs[len(h.Epochs)-1].Loss >= h.Epochs[0].Loss {
				t.Errorf("training loss did not fall: %.4f → %.4f", h.Epochs[0].Loss, h.Epochs[len(h.Epochs)-1].Loss)
			}
			if h.Test.Acc < tc.minTest {
				t.Errorf("test accuracy %.4f < %.2f", h.Test.Acc, tc.minTest)
			}
		})
	}
}
