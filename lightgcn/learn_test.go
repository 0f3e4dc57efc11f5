package lightgcn

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/workload/rec"
)

// TestTrainLearnsCommunities trains on a generated world whose users draw
// most of their items from their own community (workload/rec) and checks
// that Recall@20 rises from the untrained model's to well above random
// ranking (20 of the 400 items: 0.05) and the best epoch is reported.
func TestTrainLearnsCommunities(t *testing.T) {
	for _, tc := range []struct {
		name          string
		layers, batch int
		lr            float64
	}{
		{"lightgcn", 3, 256, 0.01},
		{"mf", 0, 256, 0.01}, // no propagation: BPR matrix factorisation
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rec.GenerateWorld(rec.WorldConfig{Users: 600, Items: 400, Communities: 8, MinDegree: 8, MaxDegree: 20,
				InBlock: 0.9, HoldOut: 0.2, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.Dim, cfg.Layers, cfg.Batch, cfg.LR, cfg.Epochs, cfg.EvalEvery = 16, tc.layers, tc.batch, tc.lr, 0, 0
			untrained, err := Train(context.Background(), d, cfg, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Epochs, cfg.EvalEvery = 30, 10
			res, err := Train(context.Background(), d, cfg, zerolog.New(zerolog.NewTestWriter(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("recall@20 untrained %.4f, trained %.4f (best epoch %d), ndcg %.4f", untrained.Last.Recall, res.Best.Recall, res.Best.Epoch, res.Best.NDCG)
			if res.Best.Recall < 0.25 || res.Best.Recall < untrained.Last.Recall+0.15 {
				t.Fatalf("recall@20 %v after training (untrained %v), want ≥ 0.25 and 0.15 above", res.Best.Recall, untrained.Last.Recall)
			}
			if len(res.Curve) != 3 || res.Epochs != 30 || res.Best.Epoch%10 != 0 {
				t.Fatalf("curve %+v, %d epochs", res.Curve, res.Epochs)
			}
		})
	}
}

// TestTrainCancelled checks that a cancelled run stops with the context's
// error and returns what it has.
func TestTrainCancelled(t *testing.T) {
	d, err := rec.GenerateWorld(rec.DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := DefaultConfig()
	cfg.Dim, cfg.Epochs = 8, 5
	res, err := Train(ctx, d, cfg, zerolog.Nop())
	if !errors.Is(err, context.Canceled) || res == nil || res.Epochs != 0 {
		t.Fatalf("cancelled run: %+v, %v", res, err)
	}
}

// TestConfigValidate lists the settings Validate refuses.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"dim", func(c *Config) { c.Dim = 0 }},
		{"layers", func(c *Config) { c.Layers = -1 }},
		{"lr", func(c *Config) { c.LR = 0 }},
		{"reg", func(c *Config) { c.Reg = -1 }},
		{"batch", func(c *Config) { c.Batch = 0 }},
		{"epochs", func(c *Config) { c.Epochs = -1 }},
		{"topk", func(c *Config) { c.TopK = 0 }},
		{"init", func(c *Config) { c.Init = "uniform" }},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", tc.name, c)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
}
