package job

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/lightgcn"
)

// TrainSpec is `graphfed train`: the centralised node-classification
// baseline (Node), or with AML.Trans set the AML one (AML). Params, Seed,
// Log and Progress are both's.
type TrainSpec struct {
	Node TrainNodeSpec
	AML  TrainAMLSpec
	// LightGCN, with Dir set, is the centralized recommender; its Batch
	// and Layers are --batch and --layers, which are the AML's otherwise.
	LightGCN lightgcn.Spec
	// StepsAlias is --steps, the deprecated name of AML.StepsPerEpoch:
	// one of the two may be set.
	StepsAlias *int
	Params     TrainParams
	Seed       uint64
	Log        zerolog.Logger
	Progress   Progress // nil: none shown
}

// DefaultTrainSpec trains DefaultNodeModel, or the AML baseline with
// DefaultTrainAMLSpec's settings, from seed 1.
func DefaultTrainSpec() TrainSpec {
	return TrainSpec{Node: TrainNodeSpec{Model: DefaultNodeModel}, AML: DefaultTrainAMLSpec(), Seed: 1}
}

// Train trains the baseline the spec names (TrainNode, TrainAML or
// LightGCN). A LightGCN run stopped early (cancellation) returns its
// evaluations so far with the error.
func Train(ctx context.Context, s TrainSpec) (TrainResult, error) {
	if lg := s.LightGCN; lg.Dir != "" {
		lg.Epochs, lg.LR, lg.Seed = s.Params.Epochs, s.Params.LR, s.Seed
		res, err := lightgcn.Run(ctx, lg, s.Log)
		if res == nil {
			return TrainResult{}, fmt.Errorf("train --lightgcn: %w", err)
		}
		return TrainResult{Algo: "lightgcn", Dataset: res.Dataset, Metrics: res.Metrics()}, err
	}
	if s.LightGCN.Batch != nil {
		s.AML.BatchSize = *s.LightGCN.Batch
	}
	if s.LightGCN.Layers != nil {
		s.AML.Layers = *s.LightGCN.Layers
	}
	if s.AML.Trans == "" {
		n := s.Node
		n.Params, n.Seed, n.Progress = s.Params, s.Seed, s.Progress
		res, err := TrainNode(ctx, n)
		if err != nil {
			return res, fmt.Errorf("train: %w", err)
		}
		return res, nil
	}
	if s.Node.Dataset != "" || s.Node.Scenario != "" {
		return TrainResult{}, errors.New("train: --aml excludes --dataset and --scenario")
	}
	a := s.AML
	if s.StepsAlias != nil {
		if a.StepsPerEpoch != nil {
			return TrainResult{}, errors.New("train --aml: --steps is the old name of --steps-per-epoch: give one")
		}
		a.StepsPerEpoch = s.StepsAlias
	}
	a.Params, a.Seed, a.Log, a.Progress = s.Params, s.Seed, s.Log, s.Progress
	res, err := TrainAML(ctx, a)
	if err != nil {
		return res, fmt.Errorf("train --aml: %w", err)
	}
	return res, nil
}
