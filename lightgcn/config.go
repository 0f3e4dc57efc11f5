package lightgcn

import "fmt"

// Config is LightGCN's hyper-parameters. DefaultConfig is the paper's
// Gowalla setting.
type Config struct {
	Dim    int // embedding dimension
	Layers int // propagation layers K (0: matrix factorisation by BPR)
	// LR is Adam's learning rate.
	LR float64
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
// 0.001, λ = 1e-4, batches of 2048, normal(0.1) initialisation, and 1000
// epochs (the official code's default; on Gowalla the paper's figures
// are the best test Recall@20 among them).
func DefaultConfig() Config {
	return Config{Dim: 64, Layers: 3, LR: 0.001, Reg: 1e-4, Batch: 2048, Epochs: 1000,
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
	return nil
}
