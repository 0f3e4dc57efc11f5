package job

import (
	"context"
	"fmt"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
)

// TrainHyper are the hyperparameters node and AML training share (one
// set of flags in `graphfed train`), resolved.
type TrainHyper struct {
	Epochs, Hidden       int
	LR                   float64
	Dropout, WeightDecay float64
}

// TrainParams are TrainHyper as a caller asks for them: a zero Epochs,
// Hidden or LR, and a nil Dropout or WeightDecay (where zero is a
// setting), is unset and takes the task's default (NodeTrainHyper,
// AMLTrainHyper).
type TrainParams struct {
	Epochs, Hidden       int
	LR                   float64
	Dropout, WeightDecay *float64
}

// over is p's set fields over the defaults d.
func (p TrainParams) over(d TrainHyper) TrainHyper {
	if p.Epochs != 0 {
		d.Epochs = p.Epochs
	}
	if p.Hidden != 0 {
		d.Hidden = p.Hidden
	}
	if p.LR != 0 {
		d.LR = p.LR
	}
	if p.Dropout != nil {
		d.Dropout = *p.Dropout
	}
	if p.WeightDecay != nil {
		d.WeightDecay = *p.WeightDecay
	}
	return d
}

// NodeTrainHyper are node training's defaults: gnn.DefaultTrainConfig's,
// Kipf & Welling's setup.
func NodeTrainHyper() TrainHyper {
	c := gnn.DefaultTrainConfig()
	return TrainHyper{Epochs: c.Epochs, Hidden: c.Hidden, LR: c.LR, Dropout: c.Dropout, WeightDecay: c.WeightDecay}
}

// DefaultNodeModel is the node model trained unless told otherwise.
const DefaultNodeModel = gnn.KindGCN

// TrainNodeSpec is a centralised node-classification baseline: one model
// trained on the whole graph (`graphfed train --dataset|--scenario`).
type TrainNodeSpec struct {
	// Dataset is a TSV directory; Scenario "csbm" generates one from CSBM
	// instead (LoadNodeDataset).
	Dataset, Scenario string
	CSBM              graph.CSBMConfig
	Model             string // gnn.KindGCN or gnn.KindSAGE; "": DefaultNodeModel
	Params            TrainParams
	Seed              uint64
	Progress          Progress // nil: none shown
}

// TrainResult is what a centralised training reports: the algorithm
// ("centralized-<model>"), the dataset's name and the metrics.
type TrainResult struct {
	Algo, Dataset string
	Metrics       map[string]any
}

// TrainNode loads or generates the dataset and trains the model on it,
// validating every tenth of the way.
func TrainNode(ctx context.Context, spec TrainNodeSpec) (TrainResult, error) {
	d, name, err := LoadNodeDataset(spec.Dataset, spec.Scenario, spec.CSBM, spec.Seed)
	if err != nil {
		return TrainResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return TrainResult{}, err
	}
	cfg := nodeTrainConfig(spec)
	cfg.RowNormalize = graph.NonNegative(d.Features)
	bar := progressOr(spec.Progress).Stage("train "+cfg.Model, cfg.Epochs)
	cfg.OnEpoch = func(e gnn.EpochStats) {
		if e.Val.Count > 0 {
			bar.Update(e.Epoch, fmt.Sprintf("loss %.4f val_acc %.4f", e.Loss, e.Val.Acc))
		}
	}
	h, err := gnn.TrainCentralized(d, cfg, rand.New(rand.NewPCG(spec.Seed, 0x7a1)))
	bar.Finish()
	if err != nil {
		return TrainResult{}, err
	}
	return TrainResult{Algo: "centralized-" + cfg.Model, Dataset: name, Metrics: map[string]any{
		"test_acc": h.Test.Acc, "test_macro_f1": h.Test.MacroF1, "val_acc": h.Val.Acc,
		"train_acc": h.Train.Acc, "epochs": cfg.Epochs, "final_loss": h.Epochs[len(h.Epochs)-1].Loss,
	}}, nil
}

// nodeTrainConfig is spec's training configuration: gnn's defaults under
// the set parameters, validation every tenth of the epochs.
func nodeTrainConfig(spec TrainNodeSpec) gnn.TrainConfig {
	cfg := gnn.DefaultTrainConfig()
	if spec.Model != "" {
		cfg.Model = spec.Model
	}
	h := spec.Params.over(NodeTrainHyper())
	cfg.Epochs, cfg.Hidden, cfg.LR, cfg.Dropout, cfg.WeightDecay = h.Epochs, h.Hidden, h.LR, h.Dropout, h.WeightDecay
	cfg.EvalEvery = max(cfg.Epochs/10, 1)
	return cfg
}
