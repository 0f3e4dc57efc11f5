package fedgsp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/learner"
)

// Learner is one FedGSP client: its fixed mixed inputs B_0..B_K, the
// spectral model, two Adam groups, FedGSP's best-validation tracking, and
// its descriptors until they are released. It implements learner.Learner
// and learner.DescriptorReleaser (this package imports neither agent nor
// bus).
type Learner struct {
	cfg     Config
	classes int
	dim     int

	// The inputs keep only the labelled rows, ordered train | val | test,
	// so each split is a contiguous slice of every B_k.
	inputs                []*gnn.Tensor // K+1 tensors, rows × d, float32
	labels                []int32       // per stored row
	nTrain, nVal, nTest   int
	trainIn, valIn, tstIn []*gnn.Tensor

	homophily float64
	homEdges  int

	m       *model
	optMLP  *gnn.Adam
	optCoef *gnn.Adam
	rng     *rand.Rand
	dLogits *gnn.Tensor
	wsTrain *workspace
	wsVal   *workspace
	wsTest  *workspace

	tracked          bool
	bestVal, testAtB float64

	// Descriptor sources, dropped once the descriptors went out.
	prop     propagator
	x        []float64
	desc     *learner.Descriptor
	cache    *DescriptorCache // nil: computed alone
	cacheKey descriptorKey    // what the descriptors depend on
	released bool
}

// NewLearner builds a client over d: it estimates ĥ from the train–train
// edges, computes the bases and mixed inputs once, and initialises the
// model from seed 0 (the agent calls Init with the job's seed). Non-negative
// features are row-normalised first, as FedGSP's NormalizeFeatures does,
// unless cfg.RawFeatures.
func NewLearner(d *graph.Dataset, cfg Config) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("fedgsp: learner: %w", err)
	}
	if d.Classes < 2 {
		return nil, fmt.Errorf("fedgsp: learner: %d classes, want at least 2", d.Classes)
	}
	if cfg.Metric == MetricROCAUC && d.Classes != 2 {
		return nil, fmt.Errorf("fedgsp: learner: metric %s needs 2 classes, dataset %q has %d", cfg.Metric, d.Name, d.Classes)
	}
	n, dim, K := d.N(), d.NumFeatures(), cfg.Orders
	l := &Learner{
		cfg: cfg, classes: d.Classes, dim: dim,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x6a5f)),
	}
	l.cacheKey = descriptorKey{data: d, raw: cfg.RawFeatures, orders: K, principal: cfg.Principal}
	l.homophily, l.homEdges = EstimateHomophily(d.Adj, d.Labels, d.Split)
	l.prop = newPropagator(d.Adj)
	if cfg.RawFeatures {
		l.x = denseFeatures(d.Features)
	} else {
		l.x = denseFeatures(graph.NormalizeIfNonNegative(d.Features))
	}

	// Stored row of each node (−1: not stored), train first.
	var order []int
	for _, s := range []graph.Split{graph.SplitTrain, graph.SplitVal, graph.SplitTest} {
		for i := 0; i < n; i++ {
			if d.Split[i] == s && d.Labels[i] >= 0 {
				order = append(order, i)
				l.labels = append(l.labels, d.Labels[i])
				switch s {
				case graph.SplitTrain:
					l.nTrain++
				case graph.SplitVal:
					l.nVal++
				default:
					l.nTest++
				}
			}
		}
	}
	rows := len(order)
	l.inputs = make([]*gnn.Tensor, K+1)
	for k := range l.inputs {
		l.inputs[k] = gnn.New(rows, dim)
	}
	for r, i := range order {
		put(l.inputs[0].Row(r), l.x[i*dim:(i+1)*dim])
	}
	tau := cfg.Tau
	walkBases(l.prop, l.x, dim, K, Angle(l.homophily), func(k int, hm, u []float64) {
		b := l.inputs[k]
		for r, i := range order {
			dst := b.Row(r)
			for j := range dst {
				dst[j] = float32(tau*hm[i*dim+j] + (1-tau)*u[i*dim+j])
			}
		}
	})
	slice := func(lo, hi int) []*gnn.Tensor {
		out := make([]*gnn.Tensor, K+1)
		for k, b := range l.inputs {
			out[k] = b.Slice(lo, hi)
		}
		return out
	}
	l.trainIn = slice(0, l.nTrain)
	l.valIn = slice(l.nTrain, l.nTrain+l.nVal)
	l.tstIn = slice(l.nTrain+l.nVal, rows)
	l.m = newModel(K, dim, cfg.Hidden, cfg.Layers, d.Classes, cfg.DropoutC, cfg.DropoutM, !cfg.NoBias)
	l.wsTrain, l.wsVal, l.wsTest = l.m.newWorkspace(), l.m.newWorkspace(), l.m.newWorkspace()
	l.Init(0)
	return l, nil
}

// denseFeatures expands a sparse n×d feature matrix into row-major float64.
func denseFeatures(f *graph.CSR) []float64 {
	out := make([]float64, f.Rows*f.Cols)
	for i := 0; i < f.Rows; i++ {
		cols, vals := f.Row(i)
		for p, j := range cols {
			v := 1.0
			if vals != nil {
				v = float64(vals[p])
			}
			out[i*f.Cols+int(j)] = v
		}
	}
	return out
}

// Homophily is the estimated ĥ and the number of train–train edges it came
// from (0: the default 0.75).
func (l *Learner) Homophily() (float64, int) { return l.homophily, l.homEdges }

// Config is the learner's configuration.
func (l *Learner) Config() Config { return l.cfg }

// SchemaHash identifies the parameter layout (names and shapes: K, d, the
// MLP's widths and the classes).
func (l *Learner) SchemaHash() string { return gnn.SchemaHash(l.m.params) }

// NumParams is the length of Params.
func (l *Learner) NumParams() int { return gnn.NumParams(l.m.params) }

// CoefLen is (K+1)·d, the length of the coefficient prefix of Params.
func (l *Learner) CoefLen() int { return (l.cfg.Orders + 1) * l.dim }

// TrainSize is the number of labelled training nodes.
func (l *Learner) TrainSize() int { return l.nTrain }

// Init re-initialises the model from seed (every client gets the same model
// from the same seed), fresh optimisers, and forgets the best-validation
// record.
func (l *Learner) Init(seed uint64) {
	l.m.init(seed)
	l.optMLP = gnn.NewAdam(l.m.mlp, l.cfg.LR1)
	l.optCoef = gnn.NewAdam(l.m.coef, l.cfg.LR2)
	l.tracked = false
}

// Params returns [c_0 | … | c_K | MLP], flat.
func (l *Learner) Params() []float32 { return gnn.Flatten(l.m.params) }

// SetParams loads a (personalised) parameter vector. The Adam moments are
// kept, as the authors keep each client's optimiser state across rounds.
func (l *Learner) SetParams(p []float32) error {
	if err := gnn.Unflatten(l.m.params, p); err != nil {
		return fmt.Errorf("fedgsp: set params: %w", err)
	}
	return nil
}

// Train takes epochs full-batch steps on the training nodes, then scores the
// locally updated model on val and test and keeps the test score at the
// best validation score (FedGSP's protocol, summary step 7). It returns the
// last training loss (0 without training nodes).
func (l *Learner) Train(epochs int) float64 {
	var loss float64
	if l.nTrain > 0 {
		for e := 0; e < epochs; e++ {
			loss = l.step()
		}
	}
	val, _ := l.score(l.wsVal, l.valIn, l.valLabels())
	test, _ := l.score(l.wsTest, l.tstIn, l.testLabels())
	if !math.IsNaN(val) && (!l.tracked || val > l.bestVal) {
		l.tracked, l.bestVal, l.testAtB = true, val, test
	}
	return loss
}

// step is one Adam step of both groups on the mean training cross-entropy
// plus the groups' L2 terms.
func (l *Learner) step() float64 {
	logits := l.m.forward(l.wsTrain, l.trainIn, true, l.rng)
	l.dLogits = gnn.Reuse(l.dLogits, logits.Rows, logits.Cols)
	loss := gnn.SoftmaxCrossEntropy(logits, l.labels[:l.nTrain], nil, nil, l.dLogits)
	l.m.backward(l.wsTrain, l.dLogits)
	gnn.ApplyWeightDecay(l.m.mlp, l.cfg.WD1)
	gnn.ApplyWeightDecay(l.m.coef, l.cfg.WD2)
	l.optMLP.Step()
	l.optCoef.Step()
	return loss
}

func (l *Learner) valLabels() []int32  { return l.labels[l.nTrain : l.nTrain+l.nVal] }
func (l *Learner) testLabels() []int32 { return l.labels[l.nTrain+l.nVal:] }
