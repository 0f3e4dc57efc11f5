package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/aml/eval"
	"graphfed/gnn"
)

// amlTrainFlags are the flags of `graphfed train --aml FILE`, the
// centralized baseline of the AML job: the federated model (gin, 32 hidden
// units, fan-out 5×5, batches of 512, Adam at 5e-3, as `sim --scenario
// aml` and deploy.DefaultAMLConfig default to) trained the banks' way
// (stratified batches with 1 in 10 laundering rows, unweighted loss,
// margins shifted to the class-weighted decision: edgegnn.SeedStream) on every
// transaction of an AMLworld file, on the temporal split the generated
// worlds use (amlworld.Graph.TemporalSplit, which amlworld.CutoffsOf turns
// into instants).
type amlTrainFlags struct {
	path          string
	kind          string
	layers        int
	batch         int
	fanOut        []int
	posFraction   float64
	stepsPerEpoch int
	steps         int // --steps, the deprecated name of --steps-per-epoch
	evalBatch     int
	valSample     int
	classCap      float64
	noReverse     bool
	noUpdates     bool
	multi         multiGNNFlags
}

// AML defaults of flags shared with node training.
const (
	amlTrainHidden = 32
	amlTrainEpochs = 10
	amlTrainLR     = 5e-3
)

// amlTrainStepsPerEpoch is the default epoch of stratified training: the
// local steps one bank takes over a default federated job (12 rounds of
// K = 32 steps), so that --epochs E trains as many steps as E banks do.
const amlTrainStepsPerEpoch = amlDefaultRounds * amlDefaultK

// amlTrainValSample bounds per-epoch validation: above the demo world's
// validation split (about 60k legitimate rows, scored whole), a fifteenth
// of a 5M-row world's, where scoring it all took 85% of an epoch.
const amlTrainValSample = 1 << 16

func (a *amlTrainFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.path, "aml", "", "train the AML transaction classifier on an AMLworld *_Trans.csv file (generated or downloaded)")
	f.StringVar(&a.kind, "kind", edgegnn.KindGIN, "AML: message passing, gin, sage or gcn")
	f.IntVar(&a.layers, "layers", 2, "AML: message-passing layers")
	f.IntVar(&a.batch, "batch", 512, "AML: seed transactions per step")
	f.IntSliceVar(&a.fanOut, "fanout", []int{5, 5}, "AML: neighbours sampled per node and direction at each layer, nearest hop first (-1: all)")
	f.Float64Var(&a.posFraction, "pos-fraction", edgegnn.DefaultPosFraction, "AML: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision, as the federated banks train (0: the default; negative: uniform batches with the class weights in the loss)")
	f.IntVar(&a.stepsPerEpoch, "steps-per-epoch", amlTrainStepsPerEpoch, fmt.Sprintf("AML: training steps per epoch. Stratified batches: default %d, the local steps of one bank over a default federated job (%d rounds × %d), so --epochs E takes as many steps as E banks; uniform batches (--pos-fraction < 0): default 0, every training row once, else a fresh random subset of them",
		amlTrainStepsPerEpoch, amlDefaultRounds, amlDefaultK))
	f.IntVar(&a.steps, "steps", 0, "AML: old name of --steps-per-epoch")
	_ = f.MarkDeprecated("steps", "use --steps-per-epoch")
	f.IntVar(&a.evalBatch, "eval-batch", 2048, "AML: seed transactions per evaluation batch")
	f.IntVar(&a.valSample, "val-sample", amlTrainValSample, "AML: the validation after every epoch (which picks the best epoch) scores every laundering validation transaction and at most this many legitimate ones, F1 weighed back to the split; the best epoch's model is then scored on all of them (≤ 0: all every epoch)")
	f.Float64Var(&a.classCap, "class-weight-cap", 10, "AML: cap of the laundering class's inverse-frequency loss weight")
	f.BoolVar(&a.noReverse, "no-reverse-mp", false, "AML: messages follow edges only (no separate outgoing aggregation)")
	f.BoolVar(&a.noUpdates, "no-edge-updates", false, "AML: no edge-embedding updates between layers")
	a.multi.register(f, "AML: ", "")
}

// config builds the training configuration; node-training flags shared by
// name (--epochs, --lr, --hidden, --dropout, --weight-decay) apply when
// given, else the AML defaults.
func (a *amlTrainFlags) config(cmd *cobra.Command, node gnn.TrainConfig) (edgegnn.TrainConfig, error) {
	switch a.kind {
	case edgegnn.KindGIN, gnn.KindSAGE, gnn.KindGCN:
	default:
		return edgegnn.TrainConfig{}, fmt.Errorf("--kind %q: want gin, sage or gcn", a.kind)
	}
	if len(a.fanOut) != a.layers {
		return edgegnn.TrainConfig{}, fmt.Errorf("--fanout %v: want one value per layer (%d)", a.fanOut, a.layers)
	}
	c := edgegnn.DefaultTrainConfig(a.kind)
	c.Model.Layers = a.layers
	c.Model.Hidden, c.Epochs, c.LR = amlTrainHidden, amlTrainEpochs, amlTrainLR
	fl := cmd.Flags()
	if fl.Changed("hidden") {
		c.Model.Hidden = node.Hidden
	}
	if fl.Changed("epochs") {
		c.Epochs = node.Epochs
	}
	if fl.Changed("lr") {
		c.LR = node.LR
	}
	if fl.Changed("dropout") {
		c.Model.Dropout = node.Dropout
	}
	if fl.Changed("weight-decay") {
		c.WeightDecay = node.WeightDecay
	}
	c.BatchSize, c.FanOut, c.EvalBatch, c.ClassWeightCap = a.batch, a.fanOut, a.evalBatch, a.classCap
	c.ValSample = a.valSample
	c.PosFraction = a.posFraction
	switch {
	case a.posFraction == 0:
		c.PosFraction = edgegnn.DefaultPosFraction
	case a.posFraction < 0:
		c.PosFraction = 0 // uniform batches, weighted loss
	case a.posFraction >= 1:
		return edgegnn.TrainConfig{}, fmt.Errorf("--pos-fraction %v: want below 1", a.posFraction)
	}
	c.StepsPerEpoch = a.stepsPerEpoch
	switch {
	case fl.Changed("steps-per-epoch") && fl.Changed("steps"):
		return edgegnn.TrainConfig{}, fmt.Errorf("--steps is the old name of --steps-per-epoch: give one")
	case fl.Changed("steps"):
		c.StepsPerEpoch = a.steps
	case !fl.Changed("steps-per-epoch") && c.PosFraction == 0:
		c.StepsPerEpoch = 0 // uniform batches: every training row once an epoch, as before
	}
	if c.PosFraction > 0 && c.StepsPerEpoch <= 0 {
		return edgegnn.TrainConfig{}, fmt.Errorf("--steps-per-epoch %d: stratified batches (--pos-fraction %v) need a positive number of steps", c.StepsPerEpoch, c.PosFraction)
	}
	m := &c.Model
	m.ReverseMP, m.EdgeUpdates = !a.noReverse, !a.noUpdates
	m.Ports, m.TimeDeltas, m.EgoIDs = a.multi.ports(), a.multi.timeDeltas(), a.multi.egoIDs()
	if a.multi.all {
		m.ReverseMP, m.EdgeUpdates = true, true
	}
	return c, nil
}

// variant names the model for reports: the kind and its Multi-GNN
// switches.
func amlVariant(m edgegnn.Config) string {
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

// runAMLTrain loads the file, trains, and reports.
func (a *amlTrainFlags) run(cmd *cobra.Command, g *globalFlags, node gnn.TrainConfig, seed uint64) error {
	start := time.Now()
	log := g.logger()
	cfg, err := a.config(cmd, node)
	if err != nil {
		return fmt.Errorf("train --aml: %w", err)
	}
	st, err := os.Stat(a.path)
	if err != nil {
		return fmt.Errorf("train --aml: %w", err)
	}
	lp := newProgress("load "+filepath.Base(a.path), int(st.Size()))
	w, iss, err := amlworld.LoadTrans(a.path, amlworld.Options{Progress: func(done, _ int64) { lp.update(int(done), "bytes") }})
	lp.finish()
	if err != nil {
		return fmt.Errorf("train --aml: %w", err)
	}
	logIssues(g, iss)
	typ, matched, err := amlPatternTypologies(a.path, w)
	if err != nil {
		return fmt.Errorf("train --aml: %w", err)
	}
	split := w.TemporalSplit()
	counts := split.Counts()
	log.Info().Int("rows", w.NumEdges()).Int("accounts", w.NumAccounts()).Ints64("split_rows", counts[:]).
		Str("model", amlVariant(cfg.Model)).Msg("train --aml: loaded")
	var p *progress
	trainSteps := 0
	cfg.StepProgress = func(epoch, step, steps int) {
		trainSteps++
		if p == nil {
			p = newProgress("train "+amlVariant(cfg.Model), cfg.Epochs*steps)
		}
		p.update((epoch-1)*steps+step, fmt.Sprintf("epoch %d", epoch))
	}
	cfg.Progress = func(e edgegnn.Epoch) {
		log.Info().Int("epoch", e.Epoch).Float64("loss", e.Loss).Float64("val_f1", e.Val.F1).Float64("seconds", e.Seconds).Msg("train --aml: epoch")
	}
	_, h, err := edgegnn.TrainClassifier(w, cfg, rand.New(rand.NewPCG(seed, 0x7a1)))
	if p != nil {
		p.finish()
	}
	if err != nil {
		return fmt.Errorf("train --aml: %w", err)
	}
	metrics := map[string]any{
		"test_f1_illicit": h.Test.F1, "test_precision_illicit": h.Test.Precision, "test_recall_illicit": h.Test.Recall,
		"val_f1_illicit": h.Val.F1, "test_f1_illicit_tuned": h.TestTuned.F1, "val_f1_illicit_tuned": h.ValTuned.F1,
		"threshold": h.Threshold, "best_epoch": h.BestEpoch, "epochs": cfg.Epochs, "rows": w.NumEdges(), "split_rows": counts[:],
		"gnn": cfg.Model.Kind, "model": amlVariant(cfg.Model), "hidden": cfg.Model.Hidden, "layers": cfg.Model.Layers,
		"batch": cfg.BatchSize, "fanout": cfg.FanOut, "lr": cfg.LR, "class_weights": h.ClassWeights,
		"recipe": amlRecipe(h), "pos_fraction": cfg.PosFraction, "steps_per_epoch": cfg.StepsPerEpoch, "train_steps": trainSteps, "val_sample": cfg.ValSample,
		"train_seconds": trainSeconds(h), "peak_rss_mib": peakRSSMiB(),
	}
	if h.Stratified {
		metrics["batch_pos_share"], metrics["margin_shift"] = h.BatchShare, h.Shift
	}
	if typ != nil {
		metrics["test_recall_by_typology"] = amlTypologyRecall(w, typ, h.TestEdges, h.TestMargins, h.Threshold)
		metrics["pattern_rows_matched"] = matched
	}
	return g.emit(Report{Command: "train", Algo: "centralized-" + amlVariant(cfg.Model), Dataset: filepath.Base(a.path), Clients: 1,
		Seed: int64(seed), Metrics: metrics}, start)
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

// peakRSSMiB is the process's peak resident set (getrusage), NaN when
// unknown.
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024 // kilobytes on Linux
}

// amlPatternTypologies reads the *_Patterns.txt beside the transactions
// file, when there is one, and returns each transaction's typology (-1 for
// none) and how many pattern rows matched a transaction; nil without a
// patterns file.
func amlPatternTypologies(transPath string, w *amlworld.Graph) ([]int8, int, error) {
	attempts, err := amlworld.LoadPatternsBeside(transPath)
	if err != nil || attempts == nil {
		return nil, 0, err
	}
	typ, matched := amlworld.MatchTypologies(w, attempts)
	return typ, matched, nil
}

// amlTypologyRecall is, per typology with test rows, the laundering test
// rows and the share flagged at arg-max (margin > 0) and at the tuned
// threshold; laundering rows outside every attempt count as "unlisted".
func amlTypologyRecall(w *amlworld.Graph, typ []int8, edges []int32, margins []float32, thr float32) map[string]any {
	type tally struct{ n, argmax, tuned int }
	by := map[string]*tally{}
	for i, e := range edges {
		if w.Label[e] == 0 {
			continue
		}
		name := eval.TypologyKey(typ[e]) // the keys sim reports: "fan_in", "unlisted"
		t := by[name]
		if t == nil {
			t = &tally{}
			by[name] = t
		}
		t.n++
		if margins[i] > 0 {
			t.argmax++
		}
		if margins[i] > thr {
			t.tuned++
		}
	}
	out := map[string]any{}
	for name, t := range by {
		out[name] = map[string]any{"rows": t.n, "recall": float64(t.argmax) / float64(t.n), "recall_tuned": float64(t.tuned) / float64(t.n)}
	}
	return out
}
