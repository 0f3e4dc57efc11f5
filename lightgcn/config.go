package lightgcn

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// Config is LightGCN's hyper-parameters. DefaultConfig is the paper's
// Gowalla setting.
type Config struct {
	Dim    int // embedding dimension
	Layers int // propagation layers K (0: matrix factorisation by BPR)
	// LR is Adam's learning rate, at every epoch under the constant
	// schedule and the first one's under the others.
	LR float64
	// LRSchedule is how the rate changes between epochs (LRAt):
	// ScheduleConstant (or empty, the paper's), ScheduleStep (×LRDecay
	// after each epoch of LRDecayEpochs) or ScheduleCosine (annealed to
	// LR·LRDecay over Epochs).
	LRSchedule string
	// LRDecay is the step schedule's factor, in (0, 1), or the cosine
	// schedule's final fraction of LR, in [0, 1).
	LRDecay float64
	// LRDecayEpochs are the step schedule's milestones, increasing.
	LRDecayEpochs []int
	// Reg is the L2 coefficient λ on the batch's layer-0 embeddings, in the
	// official code's form: λ·(‖e_u‖² + ‖e_i‖² + ‖e_j‖²)/2 summed over the
	// batch and divided by its size.
	Reg float64
	// Batch is the BPR triples per Adam step.
	Batch int
	// Epochs is the passes of training; an epoch draws as many triples as
	// there are training interactions.
	Epochs int
	// EvalEvery evaluates after every EvalEvery-th epoch (and after the
	// last); 0 evaluates after the last only.
	EvalEvery int
	// TopK is K of Recall@K and NDCG@K.
	TopK int
	// Init is the layer-0 initialisation: "normal" (N(0, InitStd²), the
	// official code's default for LightGCN) or "xavier" (uniform Xavier on
	// the user and the item tables separately, as torch's
	// xavier_uniform_ on an n×Dim embedding).
	Init    string
	InitStd float64
	Seed    uint64
}

// DefaultConfig is the paper's setting: 64 dimensions, 3 layers, Adam at
// 0.001 throughout, λ = 1e-4, batches of 2048, normal(0.1)
// initialisation, and 1000 epochs (the official code's default; on
// Gowalla the paper's figures are the best test Recall@20 among them).
// LRDecay 0.1 is only the factor a step or cosine schedule would take.
func DefaultConfig() Config {
	return Config{Dim: 64, Layers: 3, LR: 0.001, LRSchedule: ScheduleConstant, LRDecay: 0.1, Reg: 1e-4, Batch: 2048, Epochs: 1000,
		EvalEvery: 10, TopK: 20, Init: "normal", InitStd: 0.1, Seed: 2020}
}

// Validate reports a setting the model cannot run.
func (c *Config) Validate() error {
	switch {
	case c.Dim <= 0:
		return fmt.Errorf("lightgcn: config: dim %d, want > 0", c.Dim)
	case c.Layers < 0:
		return fmt.Errorf("lightgcn: config: %d layers, want ≥ 0", c.Layers)
	case !(c.LR > 0):
		return fmt.Errorf("lightgcn: config: learning rate %v, want > 0", c.LR)
	case !(c.Reg >= 0):
		return fmt.Errorf("lightgcn: config: reg %v, want ≥ 0", c.Reg)
	case c.Batch <= 0:
		return fmt.Errorf("lightgcn: config: batch %d, want > 0", c.Batch)
	case c.Epochs < 0:
		return fmt.Errorf("lightgcn: config: %d epochs, want ≥ 0", c.Epochs)
	case c.EvalEvery < 0:
		return fmt.Errorf("lightgcn: config: eval every %d, want ≥ 0", c.EvalEvery)
	case c.TopK <= 0:
		return fmt.Errorf("lightgcn: config: top %d, want > 0", c.TopK)
	case c.Init != "normal" && c.Init != "xavier":
		return fmt.Errorf("lightgcn: config: init %q, want normal or xavier", c.Init)
	case c.Init == "normal" && !(c.InitStd > 0):
		return fmt.Errorf("lightgcn: config: init std %v, want > 0", c.InitStd)
	}
	return c.validateSchedule()
}

// Spec is a training run as `graphfed train --lightgcn DIR` states it: a
// LightGCN-layout directory and the settings that were given, nil ones
// (and Epochs, LR 0, train's convention for its shared flags) taking
// DefaultConfig's values. Decay epochs without a schedule mean the step
// schedule.
type Spec struct {
	Dir                           string
	Epochs                        int
	LR                            float64
	LRSchedule                    string
	LRDecay                       *float64
	LRDecayEpochs                 []int
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
	if s.LRDecay != nil {
		c.LRDecay = *s.LRDecay
	}
	c.LRDecayEpochs = s.LRDecayEpochs
	switch {
	case s.LRSchedule != "":
		c.LRSchedule = s.LRSchedule
	case len(s.LRDecayEpochs) > 0:
		c.LRSchedule = ScheduleStep
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
