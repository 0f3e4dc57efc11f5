package cefedgnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/learner"
)

// CE-FedGNN variants (Config.Variant).
const (
	// VariantCEFedGNN keeps the moving-average embedding (γ) and gradient
	// (β) estimators of seed §3.2.
	VariantCEFedGNN = "cefedgnn"
	// VariantFedGNNST is the stale-exchange ablation: the same embedding
	// exchange without estimators, i.e. γ = 1 and β = 1 (plain SGD on the
	// latest stochastic gradient).
	VariantFedGNNST = "fedgnn-st"
)

// The CE-FedGNN learner is a Learner that also exchanges embeddings and
// shares its gradient estimator.
var (
	_ learner.Exchanger  = (*Learner)(nil)
	_ learner.GradSharer = (*Learner)(nil)
)

// Config configures a CE-FedGNN node-classification learner. Zero
// fields take the defaults of DefaultConfig, except WeightDecay and
// Dropout, for which zero means none.
type Config struct {
	Hidden      int     // hidden width H, also the width of exchanged embeddings
	LR          float64 // η in W ← W − η·G
	Gamma       float64 // γ ∈ (0, 1], embedding moving average (Eq. 5)
	Beta        float64 // β ∈ (0, 1], gradient moving average (Eq. 9)
	WeightDecay float64 // L2 on the weights, added to ∇ before Eq. 9
	Dropout     float64 // on the layer-2 input
	Variant     string  // VariantCEFedGNN or VariantFedGNNST
	Seed        uint64  // local randomness (dropout); distinct per client
}

// DefaultConfig is the configuration the tests validate on Cora.
// The optimizer is the paper's plain W ← W − η·G (no Adam), with weight
// decay inside ∇. On Cora (one client, γ = β = 1, full batch, 200 steps)
// η = 0.2, 0.5 and 1 reached 0.765, 0.776 and 0.782 test accuracy; 0.5
// is kept as the middle ground for federated runs, where K full-batch
// local steps already move a client far. Hidden 64 beat 16 (0.67–0.71
// with dropout 0.5). γ = 0.5 is the middle of the paper's search range
// [0.1, 0.9] and β = 0.9 its fixed value. On Cora cut into 16 Louvain
// clients with the paper's protocol for citation graphs (K = 32 local
// steps, 62 rounds ≈ its 2k iterations), the mean validation accuracy
// over seeds 1–3 was 0.729, 0.750, 0.753, 0.757 and 0.758 for γ = 0.1,
// 0.3, 0.5, 0.7 and 0.9 (in memory, noise at the job's default σ): the
// search picks 0.9 there, by a margin within the seeds' spread, so the
// default stays.
func DefaultConfig() Config {
	return Config{Hidden: 64, LR: 0.5, Gamma: 0.5, Beta: 0.9, WeightDecay: 5e-4, Dropout: 0.5, Variant: VariantCEFedGNN}
}

// withDefaults fills zero fields, applies the variant and validates.
func (c Config) withDefaults() (Config, error) {
	const op = "agent: cefedgnn: config"
	d := DefaultConfig()
	if c.Hidden == 0 {
		c.Hidden = d.Hidden
	}
	if c.LR == 0 {
		c.LR = d.LR
	}
	if c.Gamma == 0 {
		c.Gamma = d.Gamma
	}
	if c.Beta == 0 {
		c.Beta = d.Beta
	}
	if c.Variant == "" {
		c.Variant = d.Variant
	}
	switch c.Variant {
	case VariantCEFedGNN:
	case VariantFedGNNST:
		c.Gamma, c.Beta = 1, 1
	default:
		return c, fmt.Errorf("%s: unknown variant %q (want %q or %q)", op, c.Variant, VariantCEFedGNN, VariantFedGNNST)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.Hidden < 1:
		return c, fmt.Errorf("%s: hidden width %d, want at least 1", op, c.Hidden)
	case !finite(c.LR) || c.LR <= 0:
		return c, fmt.Errorf("%s: learning rate %v, want finite and positive", op, c.LR)
	case !(c.Gamma > 0 && c.Gamma <= 1):
		return c, fmt.Errorf("%s: gamma %v outside (0,1]", op, c.Gamma)
	case !(c.Beta > 0 && c.Beta <= 1):
		return c, fmt.Errorf("%s: beta %v outside (0,1]", op, c.Beta)
	case !finite(c.WeightDecay) || c.WeightDecay < 0:
		return c, fmt.Errorf("%s: weight decay %v, want finite and non-negative", op, c.WeightDecay)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return c, fmt.Errorf("%s: dropout %v outside [0,1)", op, c.Dropout)
	}
	return c, nil
}

// Learner is the CE-FedGNN client (seed §3.2, Algorithm 1) for
// node classification on one client's share of a graph. It trains the
// network of cefedNet full-batch on its local nodes, exchanges hidden
// embeddings of boundary nodes with the clients hosting their cross-client
// neighbours (Exchanger) and shares its gradient estimator G with the
// aggregator together with the parameters (GradSharer). One local step
// (Algorithm 1, lines 15–18) is
//
//	H̃1 ← (1−γ)·H̃1 + γ·Z1(W)                  (Eq. 5, all local nodes)
//	∇  = ∂(CE over train nodes)/∂W + wd·W    (history and received rows constant)
//	G  ← (1−β)·G + β·∇                       (Eq. 9)
//	W  ← W − η·G
//
// Evaluate scores a fresh forward pass (H̃1 = Z1(W), no dropout) with the
// received embeddings as they are, so that the scores depend on the
// parameters and the cache only, not on the estimator's history.
// A learner is not safe for concurrent use.
type Learner struct {
	cfg   Config
	data  *graph.Dataset
	x     *gnn.Sparse // N×F features, as given
	local *gnn.Sparse // N×N mean over local neighbours (layer 1)
	halo  *cefedHalo
	net   *cefedNet
	ps    []*gnn.Param
	est   []float32   // G, NumParams long
	ht    *gnn.Tensor // N×H committed H̃1; nil before the first step
	h1    *gnn.Tensor // N×H committed H1 = normalize(relu(H̃1))
	dLog  *gnn.Tensor // N×C
	rng   *rand.Rand
	nTr   int
	train []bool
	val   []bool
	test  []bool
}

// New builds a learner over cg. peers[i] is the client id
// of client index i (the CrossEdge.RemoteOwner numbering); it may be nil
// when cg has no cross edges. Features are used as given, unlike
// node.Learner's row normalization: the hidden layer is L2-normalized, and
// on bag-of-words rows divided by their length (~18 words on Cora) Z1 is
// so small that the normalization's 1/‖relu(Z1)‖ factor and the bias
// dominate and plain SGD stalls near chance (on Cora, after 400 steps at
// η from 0.1 to 2, the loss stayed above 1.8, near ln 7 ≈ 1.95, and test
// accuracy at 0.32 or less); on raw features it trains (see the Cora
// tests). Parameters start from Init(0).
func New(cg *graph.ClientGraph, peers []string, cfg Config) (*Learner, error) {
	const op = "agent: cefedgnn: new learner"
	if cg == nil || cg.Data == nil {
		return nil, fmt.Errorf("%s: nil client graph", op)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d := cg.Data
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if d.Classes < 1 {
		return nil, fmt.Errorf("%s: dataset %q has %d classes", op, d.Name, d.Classes)
	}
	in, err := gnn.NewInput(gnn.KindSAGE, d.Adj, d.Features)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	halo, err := newCEFedHalo(cg, peers, cfg.Hidden)
	if err != nil {
		return nil, err
	}
	l := &Learner{
		cfg: cfg, data: d, x: in.X, local: in.Prop, halo: halo,
		dLog:  gnn.New(d.N(), d.Classes),
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		nTr:   d.Count(graph.SplitTrain),
		train: gnn.SplitMask(d.Split, graph.SplitTrain),
		val:   gnn.SplitMask(d.Split, graph.SplitVal),
		test:  gnn.SplitMask(d.Split, graph.SplitTest),
	}
	l.Init(0)
	return l, nil
}

// Config returns the effective configuration (defaults and variant
// applied).
func (l *Learner) Config() Config { return l.cfg }

// SchemaHash implements Learner. Clients agree when their configurations
// have the same Hidden and their data the same feature and class counts.
func (l *Learner) SchemaHash() string { return gnn.SchemaHash(l.ps) }

// NumParams implements Learner.
func (l *Learner) NumParams() int { return gnn.NumParams(l.ps) }

// TrainSize implements Learner: the local training nodes.
func (l *Learner) TrainSize() int { return l.nTr }

// Init implements Learner: Glorot weights and zero biases from seed (equal
// on every client with the same seed), G = 0, and no embedding history.
// Received embeddings are kept.
func (l *Learner) Init(seed uint64) {
	l.net = newCEFedNet(l.data.NumFeatures(), l.cfg.Hidden, l.data.Classes, l.cfg.Dropout, rand.New(rand.NewPCG(seed, 0x5eed)))
	l.ps = l.net.params()
	l.est = make([]float32, gnn.NumParams(l.ps))
	l.ht, l.h1 = nil, nil
}

// Params implements Learner.
func (l *Learner) Params() []float32 { return gnn.Flatten(l.ps) }

// SetParams implements Learner. The embedding history and G are kept
// (Algorithm 1 continues them across rounds).
func (l *Learner) SetParams(p []float32) error {
	if err := gnn.Unflatten(l.ps, p); err != nil {
		return fmt.Errorf("agent: cefedgnn: set params: %w", err)
	}
	return nil
}

// Grad implements GradSharer: a copy of the gradient estimator G.
func (l *Learner) Grad() []float32 { return append([]float32(nil), l.est...) }

// SetGrad implements GradSharer. A length other than NumParams or a
// non-finite value is an error and changes nothing.
func (l *Learner) SetGrad(g []float32) error {
	const op = "agent: cefedgnn: set grad"
	if len(g) != len(l.est) {
		return fmt.Errorf("%s: vector has %d values, model has %d", op, len(g), len(l.est))
	}
	for i, v := range g {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: value %d is not finite (%v)", op, i, v)
		}
	}
	copy(l.est, g)
	return nil
}

// Train implements Learner: steps full-batch local steps; it returns the
// training cross-entropy of the last one (0 without steps). A client
// without training nodes only advances its embedding estimator.
func (l *Learner) Train(steps int) float64 {
	var loss float64
	for range steps {
		loss = l.step()
	}
	return loss
}

// step runs one local step and returns its training loss.
func (l *Learner) step() float64 {
	loss := l.lossGrad(l.ht, true)
	l.ht = cloneInto(l.ht, l.net.ht)
	l.h1 = cloneInto(l.h1, l.net.h1)
	if l.nTr == 0 {
		return 0
	}
	beta, keep := float32(l.cfg.Beta), float32(1-l.cfg.Beta)
	eta := float32(l.cfg.LR)
	off := 0
	for _, p := range l.ps {
		g := l.est[off : off+len(p.W.Data)]
		for j, d := range p.G.Data {
			g[j] = keep*g[j] + beta*d
			p.W.Data[j] -= eta * g[j]
		}
		off += len(p.W.Data)
	}
	return loss
}

// lossGrad runs forward and backward from the history prev (N×H or nil)
// and leaves ∇ (cross-entropy gradient plus wd·W) in every Param.G. It
// returns the cross-entropy over the training nodes. The committed state
// is not touched; the pass's H̃1 and H1 stay in l.net.
func (l *Learner) lossGrad(prev *gnn.Tensor, train bool) float64 {
	logits := l.net.forward(l.x, l.local, l.halo.propagation(), l.halo.cache, prev, l.cfg.Gamma, train, l.rng)
	loss := gnn.SoftmaxCrossEntropy(logits, l.data.Labels, l.train, nil, l.dLog)
	gnn.ZeroGrad(l.ps)
	l.net.backward(l.dLog)
	gnn.ApplyWeightDecay(l.ps, l.cfg.WeightDecay)
	return loss
}

// logits is the evaluation forward pass: fresh H̃1 = Z1(W), no dropout
// (N×C, owned by the network).
func (l *Learner) logits() *gnn.Tensor {
	return l.net.forward(l.x, l.local, l.halo.propagation(), l.halo.cache, nil, 1, false, l.rng)
}

// currentH1 is the committed H1, or a fresh one before the first step.
func (l *Learner) currentH1() *gnn.Tensor {
	if l.h1 != nil {
		return l.h1
	}
	l.logits()
	return l.net.h1
}

// Evaluate implements Learner with the keys of node.Learner.Evaluate,
// scoring a fresh deterministic forward pass over the current parameters
// and received embeddings: accuracy and macro-F1, the dataset's metric
// (test_score, val_score), and the test nodes' per-class counts
// (ClassCountKey) for the job's pooled macro-F1.
func (l *Learner) Evaluate() map[string]float64 {
	logits := l.logits()
	te := gnn.Score(logits, l.data.Labels, l.test)
	va := gnn.Score(logits, l.data.Labels, l.val)
	out := map[string]float64{
		"test_acc": te.Acc, "test_macro_f1": te.MacroF1, "test_n": float64(te.Count),
		"val_acc": va.Acc, "val_n": float64(va.Count),
		// The dataset's own metric, as node.Learner reports it: the job's
		// test_score and val_score read these (they were 0 without).
		"test_score": te.Acc, "val_score": va.Acc,
	}
	if l.data.ScoreMetric() == graph.MetricROCAUC {
		out["test_score"] = gnn.BinaryAUC(logits, l.data.Labels, l.test)
		out["val_score"] = gnn.BinaryAUC(logits, l.data.Labels, l.val)
	}
	tp, fp, fn := classCounts(logits, l.data.Labels, l.test)
	putClassCounts(out, "test_", tp, fp, fn)
	return out
}

// cloneInto copies src into dst, allocating dst when it is nil or of
// another shape.
func cloneInto(dst, src *gnn.Tensor) *gnn.Tensor {
	dst = gnn.Reuse(dst, src.Rows, src.Cols)
	dst.Copy(src)
	return dst
}
