package lightgcn

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// gowallaDir is the LightGCN Gowalla split in the shared data folder,
// ../shared/datasets/gowalla from the repository root.
var gowallaDir = filepath.Join("..", "..", "shared", "datasets", "gowalla")

func loadGowalla(tb testing.TB) *graph.Interactions {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(gowallaDir, "train.txt")); err != nil {
		tb.Skipf("Gowalla not available at %s (the shared data folder is absent): %v", gowallaDir, err)
	}
	d, err := graph.LoadLightGCN(gowallaDir)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TestGowallaTwoEpochs trains the paper's setting for two epochs at a
// large batch and checks that Recall@20 is far above popularity-free
// random ranking (20/40,981 items ≈ 0.0005) and that the sizes are
// Gowalla's.
func TestGowallaTwoEpochs(t *testing.T) {
	if testing.Short() {
		t.Skip("Gowalla epochs take tens of seconds; skipped under -short")
	}
	d := loadGowalla(t)
	if d.Users != 29858 || d.Items != 40981 || d.Train.NNZ() != 810128 {
		t.Fatalf("Gowalla has %d users, %d items, %d train interactions; want 29858, 40981, 810128", d.Users, d.Items, d.Train.NNZ())
	}
	cfg := DefaultConfig()
	cfg.Epochs, cfg.EvalEvery, cfg.Batch, cfg.LR = 2, 1, 16384, 0.01
	res, err := Train(context.Background(), d, cfg, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Users != 29858 || len(res.Curve) != 2 {
		t.Fatalf("evaluated %d users over %d points, want 29858 over 2", res.Users, len(res.Curve))
	}
	t.Logf("recall@20 %v ndcg@20 %v after %d epochs, %.1f s per epoch", res.Last.Recall, res.Last.NDCG, res.Epochs, res.EpochSeconds)
	if res.Last.Recall < 0.03 {
		t.Fatalf("recall@20 %v after 2 epochs, want ≥ 0.03", res.Last.Recall)
	}
}
