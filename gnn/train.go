package gnn

import (
	"fmt"
	"math/rand/v2"

	"graphfed/graph"
)

// Trainer runs full-batch training steps and keeps the loss-gradient
// buffer between them, so that a step allocates nothing once warm.
type Trainer struct {
	Model        Model
	Opt          Optimizer
	WeightDecay  float64   // L2 coefficient for parameters with Decay set
	ClassWeights []float32 // per-class loss weights (len Classes), nil = 1
	dLogits      *Tensor
}

// Step runs one training step on the nodes where mask is true: forward with
// dropout, softmax cross-entropy, backward, weight decay, optimizer update.
// It returns the cross-entropy before the update (without the L2 term).
func (t *Trainer) Step(in *Input, labels []int32, mask []bool, rng *rand.Rand) float64 {
	params := t.Model.Params()
	ZeroGrad(params)
	logits := t.Model.Forward(in, true, rng)
	t.dLogits = Reuse(t.dLogits, logits.Rows, logits.Cols)
	loss := SoftmaxCrossEntropy(logits, labels, mask, t.ClassWeights, t.dLogits)
	t.Model.Backward(t.dLogits)
	ApplyWeightDecay(params, t.WeightDecay)
	t.Opt.Step()
	return loss
}

// TrainStep is one Trainer step without kept buffers (it allocates one
// N×Classes gradient); opt must have been built over m.Params().
func TrainStep(m Model, in *Input, labels []int32, mask []bool, opt Optimizer, weightDecay float64, rng *rand.Rand) float64 {
	t := Trainer{Model: m, Opt: opt, WeightDecay: weightDecay}
	return t.Step(in, labels, mask, rng)
}

// Evaluate scores the model without dropout on the nodes where mask is
// true (nil means all) and labels[i] ≥ 0.
func Evaluate(m Model, in *Input, labels []int32, mask []bool) Scores {
	return Score(m.Forward(in, false, nil), labels, mask)
}

// TrainConfig configures TrainCentralized. DefaultTrainConfig returns Kipf
// & Welling's setup.
type TrainConfig struct {
	Model        string // KindGCN or KindSAGE
	Epochs       int
	LR           float64 // Adam learning rate
	WeightDecay  float64
	Hidden       int
	Dropout      float64
	ClassWeights []float32 // nil = unweighted loss
	RowNormalize bool      // scale every feature row to sum 1 first
	EvalEvery    int       // record validation scores every n epochs; 0 = never
	// OnEpoch, if set, sees every epoch as it finishes (progress output).
	OnEpoch func(EpochStats)
}

// DefaultTrainConfig is the Kipf & Welling (2017) setup: 2-layer GCN,
// 200 epochs of full-batch Adam, lr 0.01, weight decay 5e-4 (first layer),
// 16 hidden units, dropout 0.5, row-normalized features, no early stopping.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Model: KindGCN, Epochs: 200, LR: 0.01, WeightDecay: 5e-4, Hidden: 16, Dropout: 0.5, RowNormalize: true}
}

// EpochStats is one epoch of training.
type EpochStats struct {
	Epoch int     // from 1
	Loss  float64 // training cross-entropy
	Val   Scores  // zero unless evaluated this epoch
}

// History is the result of TrainCentralized: the per-epoch record and the
// scores of the final model.
type History struct {
	Epochs           []EpochStats
	Train, Val, Test Scores
}

// TrainCentralized trains a model on the whole of d (the non-federated
// baseline) with the train split and reports the final scores on the
// train, val and test splits.
func TrainCentralized(d *graph.Dataset, cfg TrainConfig, rng *rand.Rand) (History, error) {
	if err := d.Validate(); err != nil {
		return History{}, fmt.Errorf("gnn: train centralized: %w", err)
	}
	if cfg.Epochs <= 0 || cfg.LR <= 0 || cfg.WeightDecay < 0 || cfg.EvalEvery < 0 {
		return History{}, fmt.Errorf("gnn: train centralized: bad config: epochs=%d lr=%v weight decay=%v eval every=%d",
			cfg.Epochs, cfg.LR, cfg.WeightDecay, cfg.EvalEvery)
	}
	if cfg.ClassWeights != nil && len(cfg.ClassWeights) != d.Classes {
		return History{}, fmt.Errorf("gnn: train centralized: %d class weights for %d classes", len(cfg.ClassWeights), d.Classes)
	}
	features := d.Features
	if cfg.RowNormalize {
		features = graph.RowNormalize(features)
	}
	// NewInput and NewModel errors already name their operation.
	in, err := NewInput(cfg.Model, d.Adj, features)
	if err != nil {
		return History{}, err
	}
	m, err := NewModel(ModelConfig{Kind: cfg.Model, In: d.NumFeatures(), Hidden: cfg.Hidden, Classes: d.Classes, Dropout: cfg.Dropout}, rng)
	if err != nil {
		return History{}, err
	}
	train, val, test := SplitMask(d.Split, graph.SplitTrain), SplitMask(d.Split, graph.SplitVal), SplitMask(d.Split, graph.SplitTest)
	t := Trainer{Model: m, Opt: NewAdam(m.Params(), cfg.LR), WeightDecay: cfg.WeightDecay, ClassWeights: cfg.ClassWeights}
	h := History{Epochs: make([]EpochStats, 0, cfg.Epochs)}
	for e := 1; e <= cfg.Epochs; e++ {
		st := EpochStats{Epoch: e, Loss: t.Step(in, d.Labels, train, rng)}
		if cfg.EvalEvery > 0 && e%cfg.EvalEvery == 0 {
			st.Val = Evaluate(m, in, d.Labels, val)
		}
		h.Epochs = append(h.Epochs, st)
		if cfg.OnEpoch != nil {
			cfg.OnEpoch(st)
		}
	}
	h.Train = Evaluate(m, in, d.Labels, train)
	h.Val = Evaluate(m, in, d.Labels, val)
	h.Test = Evaluate(m, in, d.Labels, test)
	return h, nil
}

// SplitMask returns the mask of the nodes in split s.
func SplitMask(split []graph.Split, s graph.Split) []bool {
	m := make([]bool, len(split))
	for i, x := range split {
		m[i] = x == s
	}
	return m
}
