package lightgcn

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// Spec is a training run as `graphfed train --lightgcn DIR` states it: a
// LightGCN-layout directory and the settings that were given, nil ones
// (and Epochs, LR 0, train's convention for its shared flags) taking
// DefaultConfig's values.
type Spec struct {
	Dir                           string
	Epochs                        int
	LR                            float64
	Batch, Layers, Dim, EvalEvery *int
	Reg                           *float64
	Seed                          uint64
}

// Config is DefaultConfig with s's given settings.
func (s Spec) Config() Config {
	c := DefaultConfig()
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Batch, s.Batch)
	set(&c.Layers, s.Layers)
	set(&c.Dim, s.Dim)
	set(&c.EvalEvery, s.EvalEvery)
	if s.Epochs != 0 {
		c.Epochs = s.Epochs
	}
	if s.LR != 0 {
		c.LR = s.LR
	}
	if s.Reg != nil {
		c.Reg = *s.Reg
	}
	c.Seed = s.Seed
	return c
}

// Run loads s.Dir (graph.LoadLightGCN) and trains on it. On cancellation
// it returns the run so far with the context's error.
func Run(ctx context.Context, s Spec, log zerolog.Logger) (*Result, error) {
	cfg := s.Config()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, err := graph.LoadLightGCN(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("lightgcn: run: %w", err)
	}
	res, err := Train(ctx, d, cfg, log)
	if res != nil {
		res.Dataset, res.K = d.Name, cfg.TopK
	}
	return res, err
}

// Metrics is the run's figures for a report: the best evaluation's
// Recall@K and NDCG@K (recall_at_20, ndcg_at_20 at K = 20), its epoch,
// the last evaluation's, the epochs, the mean seconds per epoch and the
// curve. A run stopped before its first evaluation has no figures.
func (r *Result) Metrics() map[string]any {
	k := r.K
	m := map[string]any{"epochs": r.Epochs, "epoch_seconds": r.EpochSeconds, "train_seconds": r.Seconds, "curve": r.Curve}
	if len(r.Curve) == 0 {
		return m
	}
	m[fmt.Sprintf("recall_at_%d", k)], m[fmt.Sprintf("ndcg_at_%d", k)], m["best_epoch"] = r.Best.Recall, r.Best.NDCG, r.Best.Epoch
	m[fmt.Sprintf("last_recall_at_%d", k)], m[fmt.Sprintf("last_ndcg_at_%d", k)] = r.Last.Recall, r.Last.NDCG
	m["test_users"] = r.Users
	return m
}
