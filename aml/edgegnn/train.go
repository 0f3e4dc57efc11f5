package edgegnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
	"graphfed/graph"
)

// Stage is the data of one stage of edge classification: the graph
// visible at that stage (an Index), a sampler over it, the structural
// node features computed from it, and the edge features and labels of the
// whole graph. Training on a temporal split uses three stages, as
// Multi-GNN does: training edges only; training and validation edges
// (validation seeds); all edges (test seeds). A federated client builds
// its stages from the edges it sees.
type Stage struct {
	Index   *Index
	Sampler *Sampler
	NodeX   *gnn.Tensor // N×NodeFeatureDim, NodeFeatures of Index over its visible days
	Feat    *Featurizer
	Labels  []uint8 // per graph edge, g.Label
}

// NewStage prepares the stage of g whose visible edges are visible
// (all when nil), sampling with fanOut (see Sampler).
func NewStage(g *amlworld.Graph, visible []int32, fanOut []int, feat *Featurizer) (*Stage, error) {
	idx, err := NewGraphIndex(g, visible)
	if err != nil {
		return nil, err
	}
	s, err := NewSampler(idx, fanOut)
	if err != nil {
		return nil, err
	}
	return &Stage{Index: idx, Sampler: s, NodeX: NodeFeatures(idx, VisibleDays(g, visible)), Feat: feat, Labels: g.Label}, nil
}

// Batch samples the batch of seeds into b, sets its inputs, and returns
// the seeds' labels (into labels, grown as needed).
func (st *Stage) Batch(b *Batch, seeds []int32, labels []int32, rng *rand.Rand) ([]int32, error) {
	if err := st.Sampler.Sample(b, seeds, rng); err != nil {
		return labels, err
	}
	b.SetInputs(st.NodeX, st.Feat)
	labels = labels[:0]
	for _, e := range seeds {
		labels = append(labels, int32(st.Labels[e]))
	}
	return labels, nil
}

// BatchOn is Batch into w's batch, sampling in w's scratch: a stage
// served through Workers holds no graph-sized scratch of its own.
func (st *Stage) BatchOn(w *Worker, seeds []int32, labels []int32, rng *rand.Rand) ([]int32, error) {
	if err := st.Sampler.SampleOn(&w.scratch, &w.Batch, seeds, rng); err != nil {
		return labels, err
	}
	w.Batch.SetInputs(st.NodeX, st.Feat)
	labels = labels[:0]
	for _, e := range seeds {
		labels = append(labels, int32(st.Labels[e]))
	}
	return labels, nil
}

// EvaluateEdges scores m without dropout on seeds of st, batchSize seeds
// at a time (all at once when batchSize ≤ 0), sampling neighbourhoods with
// rng as in training.
func EvaluateEdges(m *Model, st *Stage, seeds []int32, batchSize int, rng *rand.Rand) (Scores, error) {
	s, _, _, err := evaluateEdges(m, st, seeds, batchSize, rng, false)
	return s, err
}

// EvaluateEdgeMargins scores seeds as EvaluateEdges does and also returns each
// seed's margin (logit 1 − logit 0) and label, in seed order: for
// threshold tuning and per-edge breakdowns.
func EvaluateEdgeMargins(m *Model, st *Stage, seeds []int32, batchSize int, rng *rand.Rand) (Scores, []float32, []int32, error) {
	return evaluateEdges(m, st, seeds, batchSize, rng, true)
}

func evaluateEdges(m *Model, st *Stage, seeds []int32, batchSize int, rng *rand.Rand, keep bool) (Scores, []float32, []int32, error) {
	var (
		mg     []float32
		all    []int32
		t      edgeTally
		b      Batch
		labels []int32
		err    error
	)
	if batchSize <= 0 {
		batchSize = max(len(seeds), 1)
	}
	for lo := 0; lo < len(seeds); lo += batchSize {
		chunk := seeds[lo:min(lo+batchSize, len(seeds))]
		if labels, err = st.Batch(&b, chunk, labels, rng); err != nil {
			return Scores{}, nil, nil, fmt.Errorf("gnn: evaluate edges: %w", err)
		}
		logits := m.Forward(&b, nil, false, nil)
		t.add(logits, labels)
		if keep {
			mg = append(mg, Margins(logits, nil)...)
			all = append(all, labels...)
		}
	}
	return t.scores(), mg, all, nil
}

// TrainConfig configures TrainClassifier.
type TrainConfig struct {
	Model     Config // NodeIn and EdgeIn are set from the features
	Epochs    int
	BatchSize int // seed edges per step; ≤ 0: all training edges in one step
	// StepsPerEpoch caps an epoch at this many steps over a fresh random
	// order of the training edges (≤ 0: every training edge once). With
	// PosFraction > 0 it is the epoch's number of steps, and required.
	StepsPerEpoch int
	// PosFraction, when positive (below 1), trains the federated banks'
	// way (amllearner.Learner): every step a stratified batch of BatchSize
	// seeds with this share of laundering edges (SeedStream), the loss
	// unweighted, and every margin used for a decision (validation F1 and
	// best epoch, the tuned threshold, test scores, TestMargins) shifted
	// by MarginShift(batch share, training base rate, laundering's class
	// weight) to the class-weighted objective's decision. 0: uniform
	// batches with the class weights in the loss.
	PosFraction float64
	FanOut      []int // per layer, nearest hop first; negative = all neighbours
	LR          float64
	WeightDecay float64 // L2 on weights (Decay set), not biases
	// ClassWeights are the loss weights of the two classes; nil means
	// ClassWeights(training labels, ClassWeightCap).
	ClassWeights   []float32
	ClassWeightCap float64
	EvalBatch      int // seeds per evaluation batch; ≤ 0: BatchSize
	// ValSample bounds the validation after every epoch, which picks the
	// best epoch: every laundering validation edge and a fixed sample of
	// at most ValSample legitimate ones, F1 weighed back to the split
	// (SampleEval, WeightedF1). ≤ 0: all. The best epoch's model is then
	// scored on every validation edge for the reported scores and the
	// tuned threshold. On a 5M-row world, with `train --aml`'s 65,536,
	// this is the difference between ~1M validation edges an epoch and
	// ~70k.
	ValSample int
	// Progress, when set, is called after every epoch.
	Progress func(Epoch)
	// StepProgress, when set, is called after every training step with
	// the epoch (from 1), the steps done in it and the epoch's steps.
	StepProgress func(epoch, step, steps int)
}

// DefaultTrainConfig is the centralised AML baseline of the given
// aggregation kind: DefaultConfig, Adam with lr 0.005, batches of 2048
// seed edges, fan-out [10, 10], inverse-frequency class weights capped at
// 10, 20 epochs.
func DefaultTrainConfig(kind string) TrainConfig {
	return TrainConfig{Model: DefaultConfig(kind), Epochs: 20, BatchSize: 2048, FanOut: DefaultFanOut(),
		LR: 0.005, ClassWeightCap: 10}
}

// Epoch is one epoch of edge training.
type Epoch struct {
	Epoch int // from 1
	// Loss is the mean training cross-entropy over the steps: weighted by
	// the class weights, or unweighted on stratified batches.
	Loss float64
	// Val are the validation scores, on TrainConfig.ValSample's sample
	// when set: counts of the sample, F1 weighed back to the split.
	Val     Scores
	Seconds float64 // training time of the epoch, evaluation excluded
}

// History is the result of TrainClassifier: the per-epoch record,
// the class weights used, and the scores of the model of the epoch with
// the best validation F1 (the model returned): arg-max, and at the margin
// threshold that maximizes validation F1 (BestThreshold), with the test
// edges' margins for per-edge breakdowns.
type History struct {
	Epochs       []Epoch
	ClassWeights []float32
	BestEpoch    int
	// Stratified reports training on stratified batches (PosFraction > 0
	// and training edges of both classes); BatchShare is then their
	// laundering share and Shift what was added to every margin.
	Stratified bool
	BatchShare float64
	Shift      float32
	// Val and Test are at the arg-max decision (margin > 0, after Shift);
	// their Loss is the model's unweighted cross-entropy, unshifted.
	Val, Test Scores
	// Threshold is the validation-tuned margin threshold, ValTuned and
	// TestTuned the scores at it.
	Threshold           float32
	ValTuned, TestTuned Scores
	// TestEdges are the test edges (graph ids) and TestMargins their
	// margins (logit 1 − logit 0) under the returned model.
	TestEdges   []int32
	TestMargins []float32
}

// TrainClassifier trains an edge model on g centrally (the
// non-federated baseline) on the temporal split (amlworld.DaySplit):
// Adam on mini-batches of training seed edges sampled in the training
// graph (uniform or stratified, TrainConfig.PosFraction), validation
// after every epoch on the train+validation graph, and the test edges
// scored in the full graph by the parameters of the best validation epoch,
// which the returned model holds.
func TrainClassifier(g *amlworld.Graph, cfg TrainConfig, rng *rand.Rand) (*Model, History, error) {
	const op = "gnn: train edge classifier"
	if err := g.Validate(); err != nil {
		return nil, History{}, fmt.Errorf("%s: %w", op, err)
	}
	if cfg.Epochs <= 0 || cfg.LR <= 0 || cfg.WeightDecay < 0 || len(cfg.FanOut) != cfg.Model.Layers {
		return nil, History{}, fmt.Errorf("%s: bad config: epochs=%d lr=%v weight decay=%v fan-out %v for %d layers",
			op, cfg.Epochs, cfg.LR, cfg.WeightDecay, cfg.FanOut, cfg.Model.Layers)
	}
	switch {
	case cfg.PosFraction < 0 || cfg.PosFraction >= 1 || math.IsNaN(cfg.PosFraction):
		return nil, History{}, fmt.Errorf("%s: laundering share %v of a stratified batch, want 0 (uniform batches) or in (0,1)", op, cfg.PosFraction)
	case cfg.PosFraction > 0 && (cfg.StepsPerEpoch <= 0 || cfg.BatchSize <= 1):
		return nil, History{}, fmt.Errorf("%s: stratified batches (laundering share %v) need steps per epoch > 0 and a batch of at least 2 seeds, have %d steps of %d",
			op, cfg.PosFraction, cfg.StepsPerEpoch, cfg.BatchSize)
	}
	sp := g.TemporalSplit()
	var train, trainVal, val, test []int32
	for e, s := range g.EdgeSplits(&sp) {
		switch s {
		case graph.SplitTrain:
			train = append(train, int32(e))
			trainVal = append(trainVal, int32(e))
		case graph.SplitVal:
			val = append(val, int32(e))
			trainVal = append(trainVal, int32(e))
		default:
			test = append(test, int32(e))
		}
	}
	if len(train) == 0 {
		return nil, History{}, fmt.Errorf("%s: no training edges", op)
	}
	feat := NewFeaturizer(g)
	if cfg.Model.Ports || cfg.Model.TimeDeltas {
		feat.EnableOrder()
	}
	stages := make([]*Stage, 3)
	for i, vis := range [][]int32{train, trainVal, nil} {
		st, err := NewStage(g, vis, cfg.FanOut, feat)
		if err != nil {
			return nil, History{}, fmt.Errorf("%s: %w", op, err)
		}
		stages[i] = st
	}
	mc := cfg.Model
	mc.NodeIn, mc.EdgeIn = NodeFeatureDim, EdgeFeatureDim
	m, err := NewModel(mc, rng)
	if err != nil {
		return nil, History{}, err
	}
	h := History{ClassWeights: cfg.ClassWeights}
	if h.ClassWeights == nil {
		trainLabels := make([]uint8, len(train))
		for i, e := range train {
			trainLabels[i] = g.Label[e]
		}
		h.ClassWeights = ClassWeights(trainLabels, cfg.ClassWeightCap)
	}
	if len(h.ClassWeights) != mc.Classes {
		return nil, History{}, fmt.Errorf("%s: %d class weights for %d classes", op, len(h.ClassWeights), mc.Classes)
	}
	evalBatch := cfg.EvalBatch
	if evalBatch <= 0 {
		evalBatch = cfg.BatchSize
	}
	// Evaluation samples the same neighbourhoods every time.
	evalSeed := rng.Uint64()
	evalRNG := func() *rand.Rand { return rand.New(rand.NewPCG(evalSeed, 0x5eed)) }

	tr := edgeTrainer{m: m, opt: gnn.NewAdam(m.Params(), cfg.LR), st: stages[0], weights: h.ClassWeights, wd: cfg.WeightDecay}
	var stream *SeedStream
	if cfg.PosFraction > 0 {
		stream = NewSeedStream(g, slices.Clone(train), cfg.PosFraction)
		if h.Stratified = stream.Stratified(); h.Stratified {
			tr.weights = nil // the batches carry the class balance; the margins are shifted back
			h.BatchShare = stream.Share(cfg.BatchSize)
			h.Shift = float32(stream.Shift(cfg.BatchSize, float64(h.ClassWeights[1]/h.ClassWeights[0])))
		}
	}
	// score evaluates seeds of st: the model's margins, shifted, and the
	// scores at the arg-max decision of the shifted margins.
	score := func(st *Stage, seeds []int32) (Scores, []float32, []int32, error) {
		s, mg, lb, err := EvaluateEdgeMargins(m, st, seeds, evalBatch, evalRNG())
		if err != nil || !h.Stratified {
			return s, mg, lb, err
		}
		for i := range mg {
			mg[i] += h.Shift
		}
		shifted := CountAt(mg, lb, 0)
		shifted.Loss = s.Loss
		return shifted, mg, lb, nil
	}
	valSet := EvalSample{Seeds: val, NegScale: 1}
	if cfg.ValSample > 0 {
		valSet = SampleEval(g, slices.Clone(val), cfg.ValSample, rand.New(rand.NewPCG(evalSeed, 0x5a3b1e)))
	}
	sampled := len(valSet.Seeds) < len(val)
	order := append([]int32(nil), train...)
	best := -1.0
	var (
		bestParams, valMargins []float32
		valLabels              []int32
	)
	for ep := 1; ep <= cfg.Epochs; ep++ {
		start := time.Now()
		if cfg.StepProgress != nil {
			tr.onStep = func(step, steps int) { cfg.StepProgress(ep, step, steps) }
		}
		var loss float64
		if stream != nil {
			loss, err = tr.run(cfg.StepsPerEpoch, func(int) []int32 { return stream.Next(cfg.BatchSize, rng) }, rng)
		} else {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			epoch := order
			if cfg.StepsPerEpoch > 0 && cfg.BatchSize > 0 {
				epoch = order[:min(len(order), cfg.StepsPerEpoch*cfg.BatchSize)]
			}
			loss, err = tr.epoch(epoch, cfg.BatchSize, rng)
		}
		if err != nil {
			return nil, History{}, fmt.Errorf("%s: %w", op, err)
		}
		rec := Epoch{Epoch: ep, Loss: loss, Seconds: time.Since(start).Seconds()}
		var mg []float32
		var lb []int32
		if rec.Val, mg, lb, err = score(stages[1], valSet.Seeds); err != nil {
			return nil, History{}, err
		}
		rec.Val.F1 = WeightedF1(rec.Val, valSet.NegScale)
		h.Epochs = append(h.Epochs, rec)
		if cfg.Progress != nil {
			cfg.Progress(rec)
		}
		if rec.Val.F1 > best || bestParams == nil {
			best, h.BestEpoch, h.Val = rec.Val.F1, ep, rec.Val
			bestParams, valMargins, valLabels = gnn.Flatten(m.Params()), mg, lb
		}
	}
	if err := gnn.Unflatten(m.Params(), bestParams); err != nil {
		return nil, History{}, fmt.Errorf("%s: %w", op, err)
	}
	if sampled { // the best epoch was picked on a sample: score it on all
		if h.Val, valMargins, valLabels, err = score(stages[1], val); err != nil {
			return nil, History{}, err
		}
	}
	var testLabels []int32
	if h.Test, h.TestMargins, testLabels, err = score(stages[2], test); err != nil {
		return nil, History{}, err
	}
	h.TestEdges = test
	if h.Threshold, _, err = BestThreshold(valMargins, valLabels); err != nil {
		return nil, History{}, fmt.Errorf("%s: %w", op, err)
	}
	h.ValTuned = CountAt(valMargins, valLabels, h.Threshold)
	h.TestTuned = CountAt(h.TestMargins, testLabels, h.Threshold)
	return m, h, nil
}

// edgeTrainer runs training steps and keeps the buffers between them.
type edgeTrainer struct {
	m       *Model
	opt     gnn.Optimizer
	st      *Stage
	weights []float32
	wd      float64

	onStep func(step, steps int) // after every step of an epoch, when set

	b       Batch
	labels  []int32
	dLogits *gnn.Tensor
}

// step runs one step on seeds: sample, forward with dropout, weighted
// cross-entropy, backward, weight decay, optimizer update. It returns the
// loss before the update.
func (t *edgeTrainer) step(seeds []int32, rng *rand.Rand) (float64, error) {
	var err error
	if t.labels, err = t.st.Batch(&t.b, seeds, t.labels, rng); err != nil {
		return 0, err
	}
	params := t.m.Params()
	gnn.ZeroGrad(params)
	logits := t.m.Forward(&t.b, nil, true, rng)
	t.dLogits = edgeReuse(t.dLogits, logits.Rows, logits.Cols)
	loss := gnn.SoftmaxCrossEntropy(logits, t.labels, nil, t.weights, t.dLogits)
	t.m.Backward(t.dLogits)
	gnn.ApplyWeightDecay(params, t.wd)
	t.opt.Step()
	return loss, nil
}

// epoch runs steps over order in batches of batchSize (all at once when
// ≤ 0) and returns the mean loss.
func (t *edgeTrainer) epoch(order []int32, batchSize int, rng *rand.Rand) (float64, error) {
	if batchSize <= 0 {
		batchSize = len(order)
	}
	total := (len(order) + batchSize - 1) / batchSize
	return t.run(total, func(k int) []int32 {
		lo := k * batchSize
		return order[lo:min(lo+batchSize, len(order))]
	}, rng)
}

// run runs steps on the batches batch(0), …, batch(steps−1) and returns
// the mean loss.
func (t *edgeTrainer) run(steps int, batch func(k int) []int32, rng *rand.Rand) (float64, error) {
	var sum float64
	for k := 0; k < steps; k++ {
		loss, err := t.step(batch(k), rng)
		if err != nil {
			return 0, err
		}
		sum += loss
		if t.onStep != nil {
			t.onStep(k+1, steps)
		}
	}
	return sum / float64(max(steps, 1)), nil
}
