package node

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/learner"
)

// Config configures a node-classification learner.
type Config struct {
	Model       string // gnn.KindGCN or gnn.KindSAGE
	Hidden      int
	Dropout     float64
	LR          float64
	WeightDecay float64
	Seed        uint64 // local randomness (dropout); distinct per client
	// Metric scores val_score and test_score: graph.MetricAccuracy or
	// graph.MetricROCAUC; empty: the dataset's own (meta.json).
	Metric string
	// Prox is FedProx's μ: each local step adds μ·(w − w_g) to the
	// gradient, w_g being the model last received. 0: plain FedAvg steps.
	Prox float64
	// PersonalHead is FedPer: the last layer stays with the client. It is
	// sent as zeros and the received one is ignored.
	PersonalHead bool
}

// DefaultConfig is Kipf & Welling's GCN setup.
func DefaultConfig() Config {
	return Config{Model: gnn.KindGCN, Hidden: 16, Dropout: 0.5, LR: 0.01, WeightDecay: 5e-4}
}

var _ learner.Learner = (*Learner)(nil)

// Learner trains a GNN on one client's subgraph (internal edges only:
// FedAvg and Local do not use cross-client edges).
type Learner struct {
	cfg     Config
	data    *graph.Dataset
	in      *gnn.Input
	model   gnn.Model
	trainer gnn.Trainer
	rng     *rand.Rand
	train   []bool
	val     []bool
	test    []bool
	metric  string
	global  []float32 // FedProx's anchor w_g: the parameters last set
	head    int       // FedPer: the number of trailing parameters kept local
	dLogits *gnn.Tensor
	best    bestVal
}

// New builds a learner over d. Non-negative (bag-of-words)
// features are row-normalized here, once, as the GCN reference does.
func New(d *graph.Dataset, cfg Config) (*Learner, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("agent: node learner: %w", err)
	}
	in, err := gnn.NewInput(cfg.Model, d.Adj, graph.NormalizeIfNonNegative(d.Features))
	if err != nil {
		return nil, fmt.Errorf("agent: node learner: %w", err)
	}
	l := &Learner{
		cfg: cfg, data: d, in: in,
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		train: gnn.SplitMask(d.Split, graph.SplitTrain),
		val:   gnn.SplitMask(d.Split, graph.SplitVal),
		test:  gnn.SplitMask(d.Split, graph.SplitTest),
	}
	switch l.metric = cfg.Metric; l.metric {
	case "":
		l.metric = d.ScoreMetric()
	case graph.MetricAccuracy:
	case graph.MetricROCAUC:
		if d.Classes != 2 {
			return nil, fmt.Errorf("agent: node learner: metric %s needs 2 classes, the data has %d", l.metric, d.Classes)
		}
	default:
		return nil, fmt.Errorf("agent: node learner: unknown metric %q (want %s or %s)", cfg.Metric, graph.MetricAccuracy, graph.MetricROCAUC)
	}
	if cfg.Prox < 0 || math.IsNaN(cfg.Prox) {
		return nil, fmt.Errorf("agent: node learner: FedProx μ = %v, want ≥ 0", cfg.Prox)
	}
	if err := l.build(0); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Learner) build(seed uint64) error {
	m, err := gnn.NewModel(gnn.ModelConfig{Kind: l.cfg.Model, In: l.data.NumFeatures(), Hidden: l.cfg.Hidden,
		Classes: l.data.Classes, Dropout: l.cfg.Dropout}, rand.New(rand.NewPCG(seed, 0x5eed)))
	if err != nil {
		return fmt.Errorf("agent: node learner: %w", err)
	}
	l.model = m
	l.trainer = gnn.Trainer{Model: m, Opt: gnn.NewAdam(m.Params(), l.cfg.LR), WeightDecay: l.cfg.WeightDecay}
	l.head = 0
	if l.cfg.PersonalHead {
		l.head = headParams(m)
	}
	l.global = nil
	l.best = bestVal{}
	return nil
}

// SchemaHash implements Learner.
func (l *Learner) SchemaHash() string { return gnn.SchemaHash(l.model.Params()) }

// NumParams implements Learner.
func (l *Learner) NumParams() int { return gnn.NumParams(l.model.Params()) }

// TrainSize implements Learner.
func (l *Learner) TrainSize() int { return l.data.Count(graph.SplitTrain) }

// Init implements Learner: every client built from the same seed starts from
// the same parameters.
func (l *Learner) Init(seed uint64) {
	// build cannot fail here: the configuration was validated in New.
	_ = l.build(seed)
}

// Params implements Learner. Under FedPer the personal head goes out as
// zeros: it never leaves the client.
func (l *Learner) Params() []float32 {
	p := gnn.Flatten(l.model.Params())
	clear(p[len(p)-l.head:])
	return p
}

// SetParams implements Learner. Under FedPer the received head is ignored
// and the client's own is kept; under FedProx p becomes the anchor of the
// proximal term.
func (l *Learner) SetParams(p []float32) error {
	if l.head > 0 && len(p) == l.NumParams() {
		own := gnn.Flatten(l.model.Params())
		p = append(p[:len(p)-l.head:len(p)-l.head], own[len(own)-l.head:]...)
	}
	if err := gnn.Unflatten(l.model.Params(), p); err != nil {
		return err
	}
	if l.cfg.Prox > 0 {
		l.global = append(l.global[:0], p...)
	}
	return nil
}

// Train implements Learner: full-batch epochs on the local training nodes.
func (l *Learner) Train(epochs int) float64 {
	var loss float64
	if l.TrainSize() == 0 {
		return 0
	}
	for e := 0; e < epochs; e++ {
		loss = l.step()
	}
	l.best.observe(l.scores())
	return loss
}

// Evaluate implements Learner: the current parameters' scores, and the
// test score at the best validation score seen right after local training
// (FedGSP's protocol, which scores each client's locally updated model).
func (l *Learner) Evaluate() map[string]float64 {
	sc := l.scores()
	out := map[string]float64{
		"test_acc": sc.testAcc, "test_macro_f1": sc.testF1, "test_n": float64(sc.testN),
		"val_acc": sc.valAcc, "val_n": float64(sc.valN),
		"val_score": sc.val, "test_score": sc.test,
	}
	l.best.put(out)
	return out
}
