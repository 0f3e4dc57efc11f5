package job

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/aml/eval"
	"graphfed/deploy"
	"graphfed/gnn"
	"graphfed/runreport"
)

// TrainAMLSpec is the centralised baseline of the AML job (`graphfed
// train --aml FILE`): the federated banks' model (DefaultAMLLearner)
// trained the banks' way (stratified batches, unweighted loss, margins
// shifted to the class-weighted decision: edgegnn.SeedStream) on every
// transaction of an AMLworld file, on the temporal split generated worlds
// use (amlworld.Graph.TemporalSplit). Start from DefaultTrainAMLSpec:
// fields are taken as given except where their comment names an unset
// value.
type TrainAMLSpec struct {
	// Trans is the AMLworld *_Trans.csv; a *_Patterns.txt beside it adds
	// recall by typology.
	Trans  string
	Params TrainParams // unset: AMLTrainHyper
	Kind   string      // edgegnn.KindGIN, gnn.KindSAGE or gnn.KindGCN
	Layers int
	// BatchSize is the seed transactions per step, FanOut the neighbours
	// sampled per node and direction at each layer, nearest hop first
	// (-1: all), one per layer.
	BatchSize int
	FanOut    []int
	// PosFraction is the share of laundering transactions in each
	// training batch, below 1 (0: edgegnn.DefaultPosFraction; negative:
	// uniform batches with the class weights in the loss).
	PosFraction float64
	// StepsPerEpoch is nil when unset: DefaultAMLTrainStepsPerEpoch on
	// stratified batches, every training row once on uniform ones.
	StepsPerEpoch *int
	EvalBatch     int
	// ValSample bounds the per-epoch validation (edgegnn.TrainConfig;
	// ≤ 0: all every epoch).
	ValSample      int
	ClassWeightCap float64
	// The model's message passing: reverse message passing and edge
	// updates unless turned off, Multi-GNN's ports, time deltas and ego
	// IDs when asked for; MultiGNN turns all five on.
	NoReverseMP, NoEdgeUpdates bool
	Ports, TimeDeltas, EgoIDs  bool
	MultiGNN                   bool
	Seed                       uint64
	Log                        zerolog.Logger
	Progress                   Progress // nil: none shown
}

// DefaultAMLTrainEpochs is the centralised AML baseline's epochs.
const DefaultAMLTrainEpochs = 10

// DefaultAMLTrainStepsPerEpoch is an epoch of stratified training: the
// local steps one bank takes over a default federated job (DefaultAMLRounds
// rounds of deploy.DefaultAMLLocalSteps), so that E epochs train as many
// steps as E banks do.
const DefaultAMLTrainStepsPerEpoch = DefaultAMLRounds * deploy.DefaultAMLLocalSteps

// DefaultAMLTrainValSample bounds per-epoch validation: above the demo
// world's validation split (about 60k legitimate rows, scored whole), a
// fifteenth of a 5M-row world's, where scoring it all took 85% of an epoch.
const DefaultAMLTrainValSample = 1 << 16

// DefaultAMLTrainEvalBatch is the seed transactions per evaluation batch.
const DefaultAMLTrainEvalBatch = 2048

// AMLTrainHyper are the AML baseline's defaults of the parameters shared
// with node training: the banks' learner's (DefaultAMLLearner) hidden
// units and learning rate, edgegnn's dropout, no weight decay.
func AMLTrainHyper() TrainHyper {
	l := DefaultAMLLearner()
	m := edgegnn.DefaultConfig(l.Kind)
	return TrainHyper{Epochs: DefaultAMLTrainEpochs, Hidden: l.Hidden, LR: l.LR, Dropout: m.Dropout}
}

// DefaultTrainAMLSpec is the banks' learner and recipe: DefaultAMLLearner's
// kind, batch and fan-out, edgegnn's layers and class-weight cap.
func DefaultTrainAMLSpec() TrainAMLSpec {
	l := DefaultAMLLearner()
	t := edgegnn.DefaultTrainConfig(l.Kind)
	return TrainAMLSpec{Kind: l.Kind, Layers: t.Model.Layers, BatchSize: l.BatchSize, FanOut: l.FanOut,
		PosFraction: edgegnn.DefaultPosFraction, EvalBatch: DefaultAMLTrainEvalBatch, ValSample: DefaultAMLTrainValSample,
		ClassWeightCap: t.ClassWeightCap, Seed: 1}
}

// trainConfig is the edge GNN's training configuration of spec; its
// errors name the flags of `graphfed train --aml`.
func (s TrainAMLSpec) trainConfig() (edgegnn.TrainConfig, error) {
	switch s.Kind {
	case edgegnn.KindGIN, gnn.KindSAGE, gnn.KindGCN:
	default:
		return edgegnn.TrainConfig{}, fmt.Errorf("--kind %q: want gin, sage or gcn", s.Kind)
	}
	if len(s.FanOut) != s.Layers {
		return edgegnn.TrainConfig{}, fmt.Errorf("--fanout %v: want one value per layer (%d)", s.FanOut, s.Layers)
	}
	c := edgegnn.DefaultTrainConfig(s.Kind)
	h := s.Params.over(AMLTrainHyper())
	c.Model.Layers, c.Model.Hidden, c.Model.Dropout = s.Layers, h.Hidden, h.Dropout
	c.Epochs, c.LR, c.WeightDecay = h.Epochs, h.LR, h.WeightDecay
	c.BatchSize, c.FanOut, c.EvalBatch, c.ClassWeightCap = s.BatchSize, s.FanOut, s.EvalBatch, s.ClassWeightCap
	c.ValSample = s.ValSample
	switch {
	case s.PosFraction == 0:
		c.PosFraction = edgegnn.DefaultPosFraction
	case s.PosFraction < 0:
		c.PosFraction = 0 // uniform batches, weighted loss
	case s.PosFraction >= 1:
		return edgegnn.TrainConfig{}, fmt.Errorf("--pos-fraction %v: want below 1", s.PosFraction)
	default:
		c.PosFraction = s.PosFraction
	}
	switch {
	case s.StepsPerEpoch != nil:
		c.StepsPerEpoch = *s.StepsPerEpoch
	case c.PosFraction > 0:
		c.StepsPerEpoch = DefaultAMLTrainStepsPerEpoch
	default:
		c.StepsPerEpoch = 0 // uniform batches: every training row once an epoch
	}
	if c.PosFraction > 0 && c.StepsPerEpoch <= 0 {
		return edgegnn.TrainConfig{}, fmt.Errorf("--steps-per-epoch %d: stratified batches (--pos-fraction %v) need a positive number of steps", c.StepsPerEpoch, c.PosFraction)
	}
	m := &c.Model
	m.ReverseMP, m.EdgeUpdates = !s.NoReverseMP, !s.NoEdgeUpdates
	m.Ports, m.TimeDeltas, m.EgoIDs = s.Ports || s.MultiGNN, s.TimeDeltas || s.MultiGNN, s.EgoIDs || s.MultiGNN
	if s.MultiGNN {
		m.ReverseMP, m.EdgeUpdates = true, true
	}
	return c, nil
}

// TrainAML checks the spec, loads the file and its patterns, trains and
// scores the model.
func TrainAML(ctx context.Context, spec TrainAMLSpec) (TrainResult, error) {
	cfg, err := spec.trainConfig()
	if err != nil {
		return TrainResult{}, err
	}
	if spec.Trans == "" {
		return TrainResult{}, errors.New("no AMLworld transactions file to train on")
	}
	progress, log := progressOr(spec.Progress), spec.Log
	st, err := os.Stat(spec.Trans)
	if err != nil {
		return TrainResult{}, err
	}
	lb := progress.Stage("load "+filepath.Base(spec.Trans), int(st.Size()))
	w, iss, err := amlworld.LoadTrans(spec.Trans, amlworld.Options{Progress: func(done, _ int64) { lb.Update(int(done), "bytes") }})
	lb.Finish()
	if err != nil {
		return TrainResult{}, err
	}
	LogAMLIssues(log, iss)
	attempts, err := amlworld.LoadPatternsBeside(spec.Trans)
	if err != nil {
		return TrainResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return TrainResult{}, err
	}
	split := w.TemporalSplit()
	counts := split.Counts()
	variant := AMLModelVariant(cfg.Model)
	log.Info().Int("rows", w.NumEdges()).Int("accounts", w.NumAccounts()).Ints64("split_rows", counts[:]).
		Str("model", variant).Msg("train --aml: loaded")
	var bar Bar
	trainSteps := 0
	cfg.StepProgress = func(epoch, step, steps int) {
		trainSteps++
		if bar == nil {
			bar = progress.Stage("train "+variant, cfg.Epochs*steps)
		}
		bar.Update((epoch-1)*steps+step, fmt.Sprintf("epoch %d", epoch))
	}
	cfg.Progress = func(e edgegnn.Epoch) {
		log.Info().Int("epoch", e.Epoch).Float64("loss", e.Loss).Float64("val_f1", e.Val.F1).Float64("seconds", e.Seconds).Msg("train --aml: epoch")
	}
	_, h, err := edgegnn.TrainClassifier(w, cfg, rand.New(rand.NewPCG(spec.Seed, 0x7a1)))
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return TrainResult{}, err
	}
	metrics := map[string]any{
		"test_f1_illicit": h.Test.F1, "test_precision_illicit": h.Test.Precision, "test_recall_illicit": h.Test.Recall,
		"val_f1_illicit": h.Val.F1, "test_f1_illicit_tuned": h.TestTuned.F1, "val_f1_illicit_tuned": h.ValTuned.F1,
		"threshold": h.Threshold, "best_epoch": h.BestEpoch, "epochs": cfg.Epochs, "rows": w.NumEdges(), "split_rows": counts[:],
		"gnn": cfg.Model.Kind, "model": variant, "hidden": cfg.Model.Hidden, "layers": cfg.Model.Layers,
		"batch": cfg.BatchSize, "fanout": cfg.FanOut, "lr": cfg.LR, "class_weights": h.ClassWeights,
		"recipe": amlRecipe(h), "pos_fraction": cfg.PosFraction, "steps_per_epoch": cfg.StepsPerEpoch, "train_steps": trainSteps, "val_sample": cfg.ValSample,
		"train_seconds": trainSeconds(h), "peak_rss_mib": runreport.PeakRSSMiB(),
	}
	if h.Stratified {
		metrics["batch_pos_share"], metrics["margin_shift"] = h.BatchShare, h.Shift
	}
	if attempts != nil {
		typ, matched := amlworld.MatchTypologies(w, attempts)
		metrics["test_recall_by_typology"] = typologyRecall(w, typ, h.TestEdges, h.TestMargins, h.Threshold)
		metrics["pattern_rows_matched"] = matched
	}
	return TrainResult{Algo: "centralized-" + variant, Dataset: filepath.Base(spec.Trans), Metrics: metrics}, nil
}

// AMLModelVariant names an edge GNN for reports: its kind and its
// Multi-GNN switches ("gin+eu+rmp").
func AMLModelVariant(m edgegnn.Config) string {
	s := m.Kind
	for _, o := range []struct {
		on   bool
		name string
	}{{m.EdgeUpdates, "eu"}, {m.ReverseMP, "rmp"}, {m.Ports, "ports"}, {m.TimeDeltas, "tds"}, {m.EgoIDs, "ego"}} {
		if o.on {
			s += "+" + o.name
		}
	}
	return s
}

// amlRecipe names how the model was trained: "stratified" (the federated
// banks' batches and shifted margins) or "uniform-weighted" (uniform
// batches, class-weighted loss; also when stratification was asked for
// but the training rows hold one class only).
func amlRecipe(h edgegnn.History) string {
	if h.Stratified {
		return "stratified"
	}
	return "uniform-weighted"
}

func trainSeconds(h edgegnn.History) float64 {
	var s float64
	for _, e := range h.Epochs {
		s += e.Seconds
	}
	return s
}

// typologyRecall is, per typology with test rows (eval.TypologyKey's
// names, "unlisted" for laundering outside every attempt), the laundering
// test rows and the share flagged at arg-max (margin > 0) and at the tuned
// threshold, pooled the way the federated job pools its banks' counts
// (eval.TypologyRecalls).
func typologyRecall(w *amlworld.Graph, typ []int8, edges []int32, margins []float32, thr float32) map[string]any {
	argmax, tuned := map[string]float64{}, map[string]float64{}
	for i, e := range edges {
		if w.Label[e] == 0 {
			continue
		}
		key := "test_typ_" + eval.TypologyKey(typ[e])
		argmax[key+"_pos"]++
		tuned[key+"_pos"]++
		if margins[i] > 0 {
			argmax[key+"_tp"]++
		}
		if margins[i] > thr {
			tuned[key+"_tp"]++
		}
	}
	at := eval.TypologyRecalls(map[string]map[string]float64{"tuned": tuned})
	out := map[string]any{}
	for name, r := range eval.TypologyRecalls(map[string]map[string]float64{"argmax": argmax}) {
		out[name] = map[string]any{"rows": r.Rows, "recall": r.Recall, "recall_tuned": at[name].Recall}
	}
	return out
}
