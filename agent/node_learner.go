package agent

import (
	"fmt"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
)

// NodeConfig configures a node-classification learner.
type NodeConfig struct {
	Model       string // gnn.KindGCN or gnn.KindSAGE
	Hidden      int
	Dropout     float64
	LR          float64
	WeightDecay float64
	Seed        uint64 // local randomness (dropout); distinct per client
}

// DefaultNodeConfig is Kipf & Welling's GCN setup.
func DefaultNodeConfig() NodeConfig {
	return NodeConfig{Model: gnn.KindGCN, Hidden: 16, Dropout: 0.5, LR: 0.01, WeightDecay: 5e-4}
}

// NodeLearner trains a GNN on one client's subgraph (internal edges only:
// FedAvg and Local do not use cross-client edges).
type NodeLearner struct {
	cfg     NodeConfig
	data    *graph.Dataset
	in      *gnn.Input
	model   gnn.Model
	trainer gnn.Trainer
	rng     *rand.Rand
	train   []bool
	val     []bool
	test    []bool
}

// NewNodeLearner builds a learner over d. Non-negative (bag-of-words)
// features are row-normalized here, once, as the GCN reference does.
func NewNodeLearner(d *graph.Dataset, cfg NodeConfig) (*NodeLearner, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("agent: node learner: %w", err)
	}
	in, err := gnn.NewInput(cfg.Model, d.Adj, graph.NormalizeIfNonNegative(d.Features))
	if err != nil {
		return nil, fmt.Errorf("agent: node learner: %w", err)
	}
	l := &NodeLearner{
		cfg: cfg, data: d, in: in,
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		train: gnn.SplitMask(d.Split, graph.SplitTrain),
		val:   gnn.SplitMask(d.Split, graph.SplitVal),
		test:  gnn.SplitMask(d.Split, graph.SplitTest),
	}
	if err := l.build(0); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *NodeLearner) build(seed uint64) error {
	m, err := gnn.NewModel(gnn.ModelConfig{Kind: l.cfg.Model, In: l.data.NumFeatures(), Hidden: l.cfg.Hidden,
		Classes: l.data.Classes, Dropout: l.cfg.Dropout}, rand.New(rand.NewPCG(seed, 0x5eed)))
	if err != nil {
		return fmt.Errorf("agent: node learner: %w", err)
	}
	l.model = m
	l.trainer = gnn.Trainer{Model: m, Opt: gnn.NewAdam(m.Params(), l.cfg.LR), WeightDecay: l.cfg.WeightDecay}
	return nil
}

// SchemaHash implements Learner.
func (l *NodeLearner) SchemaHash() string { return gnn.SchemaHash(l.model.Params()) }

// NumParams implements Learner.
func (l *NodeLearner) NumParams() int { return gnn.NumParams(l.model.Params()) }

// TrainSize implements Learner.
func (l *NodeLearner) TrainSize() int { return l.data.Count(graph.SplitTrain) }

// Init implements Learner: every client built from the same seed starts from
// the same parameters.
func (l *NodeLearner) Init(seed uint64) {
	// build cannot fail here: the configuration was validated in NewNodeLearner.
	_ = l.build(seed)
}

// Params implements Learner.
func (l *NodeLearner) Params() []float32 { return gnn.Flatten(l.model.Params()) }

// SetParams implements Learner.
func (l *NodeLearner) SetParams(p []float32) error { return gnn.Unflatten(l.model.Params(), p) }

// Train implements Learner: full-batch epochs on the local training nodes.
func (l *NodeLearner) Train(epochs int) float64 {
	var loss float64
	if l.TrainSize() == 0 {
		return 0
	}
	for e := 0; e < epochs; e++ {
		loss = l.trainer.Step(l.in, l.data.Labels, l.train, l.rng)
	}
	return loss
}

// Evaluate implements Learner.
func (l *NodeLearner) Evaluate() map[string]float64 {
	te := gnn.Evaluate(l.model, l.in, l.data.Labels, l.test)
	va := gnn.Evaluate(l.model, l.in, l.data.Labels, l.val)
	return map[string]float64{
		"test_acc": te.Acc, "test_macro_f1": te.MacroF1, "test_n": float64(te.Count),
		"val_acc": va.Acc, "val_n": float64(va.Count),
	}
}
