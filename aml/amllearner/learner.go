package amllearner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/learner"
)

// Data is one bank's share of an AML world, and nothing more: a graph
// of the transactions it sees (at least one endpoint is its account;
// attributes of a cross-bank transaction are seen by both banks), their
// split, which of them it scores, which accounts it hosts, and for accounts
// hosted elsewhere the bank (client id) hosting them. Accounts are local
// indices of Graph; Global names them to other banks.
type Data struct {
	Graph  *amlworld.Graph  // the visible transactions only
	Split  []graph.Split    // per transaction of Graph
	Home   []bool           // per transaction of Graph: scored by this bank
	Owned  []bool           // per account of Graph: hosted here
	Global []int64          // per account of Graph: its id in exchanges between banks
	Remote map[int32]string // adjacent foreign account -> its bank's client id
	// Peers maps a neighbouring bank to our accounts facing it (ascending).
	Peers map[string][]int32
	// First and Last are the job's earliest and latest transaction (Unix
	// seconds), the range of the time feature, so that banks compute the
	// same features for a transaction they share; both zero means Graph's
	// own range.
	First, Last int64
	// Typology, when known, is per transaction of Graph its laundering
	// typology (an amlworld.Typology; -1 for none): evaluation labels like
	// the laundering flag, used only to count recall by typology.
	Typology []int8
}

// DefaultPosFraction is the default share of laundering transactions in
// a bank's training batch, edgegnn.DefaultPosFraction: stratified batches,
// unweighted, with margins shifted to the class-weighted objective's
// decision (edgegnn.SeedStream, edgegnn.MarginShift), as the centralized baseline
// trains.
const DefaultPosFraction = edgegnn.DefaultPosFraction

// Config configures a Learner.
type Config struct {
	Kind   string  // edgegnn.KindGIN (default), KindSAGE or KindGCN
	Hidden int     // default 64
	LR     float64 // Adam, default 1e-3
	// Opt is OptAdam (default) or OptCEFed: Eq. 9's G ← (1−β)G + β∇ and
	// W ← W − ηG, with Beta (default DefaultBeta) and Eta (default
	// DefaultEta).
	Opt       string
	Beta, Eta float64
	GradClip  float64 // OptCEFed: ‖∇‖ bound before Eq. 9, default DefaultGradClip
	// ShareGrad shares G with the aggregator (GradSharer) under OptCEFed:
	// set for the algorithms that average it (cefedgnn, fedgnn-st), never
	// for FedAvg, whose strategy would otherwise average it too.
	ShareGrad bool
	BatchSize int   // seed transactions per step, default 512
	FanOut    []int // default [10 10]
	// Gamma is the moving-average rate of the per-layer boundary embedding
	// estimators (CE-FedGNN's γ, Eq. 5; cefed.go); 1 keeps and releases
	// the latest value (FedGNN-ST).
	Gamma float64
	// ExchangeEvery releases boundary embeddings every this many rounds
	// (1, 1+E, ...); default 1.
	ExchangeEvery int
	// ReleaseDims, when positive and below Hidden, releases r = ReleaseDims
	// coordinates of each layer's estimate, its projection on a basis all
	// banks share (release_dims.go), instead of all Hidden; 0 releases
	// every coordinate.
	ReleaseDims int
	// Release is what a boundary account's release carries: ReleaseHidden
	// (the per-layer estimates), ReleaseFeatures (layer 0, its structural
	// features as its bank sees them, release_features.go; the
	// default, DefaultRelease) or ReleaseAll (both). Every bank of a
	// job must use the same.
	Release string
	// PoolWeight is the least weight of a foreign account's newest release
	// in the running mean of its releases that the learner reads
	// (poolRelease): the n-th release enters with max(1/n, PoolWeight, its
	// own reliability). 1 reads only the latest release; 0 is the default,
	// DefaultPoolWeight.
	PoolWeight float64
	// PosFraction stratifies training batches: this share of each batch is
	// laundering transactions, unweighted, and scores are shifted to the
	// class-weighted objective's decision (edgegnn.SeedStream). 0: the default
	// (DefaultPosFraction); negative: uniform batches, weighted loss.
	PosFraction float64
	// EvalSample bounds the per-round evaluation to every laundering
	// transaction and this many legitimate ones per split (default
	// DefaultEvalSample; negative: all). The final evaluation scores all.
	EvalSample int
	// OnFinalScore, if set, hears the final evaluation's progress: seeds
	// scored and to score. It runs on the learner's goroutine.
	OnFinalScore func(done, total int)
	Seed         uint64
	// Work is the pool of model work buffers the learner steps and scores
	// through, shared by every bank of a process so that they hold at
	// most GOMAXPROCS sets (edgegnn.Workers); nil: a pool of one of the
	// learner's own.
	Work *edgegnn.Workers
	// Multi-GNN switches on top of the default model (edgegnn.Config;
	// reverse message passing and edge updates are always on).
	Ports, TimeDeltas, EgoIDs bool
}

// Learner trains a bank's transaction classifier. Cross-bank
// neighbours' embeddings at every layer come from the latest release of
// their bank's moving-average estimators (rescaled to this bank's mean norm
// per layer, since releases are on the unit sphere) and receive no
// gradient: each bank back-propagates only through its own endpoint. The
// estimators, the release layout and the optimizer are CE-FedGNN's
// (cefed.go).
type Learner struct {
	cfg       Config
	d         Data
	trainSt   *edgegnn.Stage     // training transactions only
	evalSt    *edgegnn.Stage     // every visible transaction
	train     []int32            // training seeds (transactions of d.Graph)
	val       []int32            // home validation seeds
	test      []int32            // home test seeds
	valSample edgegnn.EvalSample // the per-round evaluation set
	weights   []float32
	model     *edgegnn.Model
	opt       *gnn.Adam
	rng       *rand.Rand
	seeds     *edgegnn.SeedStream
	shift     float32          // added to margins when scoring (edgegnn.SeedStream.Shift)
	work      *edgegnn.Workers // model work buffers, shared by the process's banks

	byID    map[int64]int32      // global id -> foreign account of d.Graph
	remote  *remoteStore         // per foreign account: the pooled mean of its releases, L·(H+1), as released
	alpha   map[string][]float32 // per sender, per layer: signal share of its pooled rows at its latest release
	own     map[int32]*estimate  // H̃^1..H̃^L of our boundary accounts
	facing  map[int32]bool       // our accounts facing some neighbour
	meanPre []float64            // per layer: mean norm of our accounts' pre-activations
	basis   []*gnn.Tensor        // per layer: the shared release basis (ReleaseDims > 0), else nil
	lay     releaseLayout        // the blocks of a release row
	ownX    map[int32][]float32  // foreign accounts with released features: our own view of them
	est     []float32            // G (OptCEFed)
}

var _ learner.ExchangeScheduler = (*Learner)(nil)

// ExchangeDue implements ExchangeScheduler.
func (l *Learner) ExchangeDue(round uint64) bool {
	e := uint64(max(l.cfg.ExchangeEvery, 1))
	return round > 0 && (round-1)%e == 0
}

// New prepares a bank's stages, features and model.
func New(d Data, cfg Config) (*Learner, error) {
	if cfg.Kind == "" {
		cfg.Kind = edgegnn.KindGIN
	}
	if cfg.Hidden == 0 {
		cfg.Hidden = 64
	}
	if cfg.LR == 0 {
		cfg.LR = 1e-3
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 512
	}
	if cfg.FanOut == nil {
		cfg.FanOut = []int{10, 10}
	}
	if cfg.Gamma == 0 {
		cfg.Gamma = 0.5
	}
	if cfg.Work == nil {
		cfg.Work = edgegnn.NewWorkers(1)
	}
	if cfg.PosFraction == 0 {
		cfg.PosFraction = DefaultPosFraction
	}
	if cfg.PosFraction >= 1 {
		return nil, fmt.Errorf("agent: aml learner: laundering share %v of a batch, want below 1", cfg.PosFraction)
	}
	if cfg.EvalSample == 0 {
		cfg.EvalSample = DefaultEvalSample
	}
	if cfg.Opt == "" {
		cfg.Opt = OptAdam
	}
	if cfg.Beta == 0 {
		cfg.Beta = DefaultBeta
	}
	if cfg.Eta == 0 {
		cfg.Eta = DefaultEta
	}
	if cfg.GradClip == 0 {
		cfg.GradClip = DefaultGradClip
	}
	if cfg.PoolWeight == 0 {
		cfg.PoolWeight = DefaultPoolWeight
	}
	if cfg.ReleaseDims >= cfg.Hidden {
		cfg.ReleaseDims = 0
	}
	if cfg.Release == "" {
		cfg.Release = DefaultRelease
	}
	switch {
	case cfg.Release != ReleaseHidden && cfg.Release != ReleaseFeatures && cfg.Release != ReleaseAll:
		return nil, fmt.Errorf("agent: aml learner: release %q, want %s, %s or %s", cfg.Release, ReleaseHidden, ReleaseFeatures, ReleaseAll)
	case cfg.ReleaseDims < 0:
		return nil, fmt.Errorf("agent: aml learner: %d release dimensions, want 0 (all) or more", cfg.ReleaseDims)
	case !(cfg.PoolWeight > 0 && cfg.PoolWeight <= 1):
		return nil, fmt.Errorf("agent: aml learner: pool weight %v of a new release outside (0,1]", cfg.PoolWeight)
	case !(cfg.Gamma > 0 && cfg.Gamma <= 1):
		return nil, fmt.Errorf("agent: aml learner: γ %v outside (0,1]", cfg.Gamma)
	case !(cfg.Beta > 0 && cfg.Beta <= 1):
		return nil, fmt.Errorf("agent: aml learner: β %v outside (0,1]", cfg.Beta)
	case !(cfg.Eta > 0) || math.IsInf(cfg.Eta, 0):
		return nil, fmt.Errorf("agent: aml learner: η %v, want finite and positive", cfg.Eta)
	case !(cfg.GradClip > 0):
		return nil, fmt.Errorf("agent: aml learner: gradient clip %v, want positive", cfg.GradClip)
	case cfg.Opt != OptAdam && cfg.Opt != OptCEFed:
		return nil, fmt.Errorf("agent: aml learner: optimizer %q, want %s or %s", cfg.Opt, OptAdam, OptCEFed)
	case len(cfg.FanOut) < 1 || len(cfg.FanOut) > 31:
		return nil, fmt.Errorf("agent: aml learner: %d layers of fan-out, want 1 to 31", len(cfg.FanOut))
	}
	if d.Graph == nil {
		return nil, fmt.Errorf("agent: aml learner: no graph")
	}
	m, n := d.Graph.NumEdges(), d.Graph.NumAccounts()
	if len(d.Split) != m || len(d.Home) != m || len(d.Owned) != n || len(d.Global) != n {
		return nil, fmt.Errorf("agent: aml learner: %d transactions with %d splits and %d home flags, %d accounts with %d owned flags and %d global ids",
			m, len(d.Split), len(d.Home), n, len(d.Owned), len(d.Global))
	}
	if d.Typology != nil && len(d.Typology) != m {
		return nil, fmt.Errorf("agent: aml learner: %d typologies for %d transactions", len(d.Typology), m)
	}
	if d.Last < d.First {
		return nil, fmt.Errorf("agent: aml learner: time range [%d, %d] reversed", d.First, d.Last)
	}
	width := cfg.Hidden
	if cfg.ReleaseDims > 0 {
		width = cfg.ReleaseDims
	}
	lay := layoutFor(cfg.Release, len(cfg.FanOut), width)
	l := &Learner{cfg: cfg, d: d, work: cfg.Work, rng: rand.New(rand.NewPCG(cfg.Seed, 0xa31)), byID: make(map[int64]int32, len(d.Remote)),
		lay: lay, remote: newRemoteStore(n, lay), alpha: map[string][]float32{}, own: map[int32]*estimate{}, ownX: map[int32][]float32{},
		facing: map[int32]bool{}, meanPre: make([]float64, len(cfg.FanOut))}
	if cfg.ReleaseDims > 0 {
		for k := range len(cfg.FanOut) {
			l.basis = append(l.basis, releaseBasis(cfg.Hidden, cfg.ReleaseDims, k))
		}
	}
	for a := range d.Remote {
		if a < 0 || int(a) >= n || d.Owned[a] {
			return nil, fmt.Errorf("agent: aml learner: remote account %d is not a foreign account of the graph", a)
		}
		if prev, dup := l.byID[d.Global[a]]; dup {
			return nil, fmt.Errorf("agent: aml learner: accounts %d and %d share global id %d", prev, a, d.Global[a])
		}
		l.byID[d.Global[a]] = a
	}
	for id, accts := range d.Peers {
		for _, a := range accts {
			if a < 0 || int(a) >= n || !d.Owned[a] {
				return nil, fmt.Errorf("agent: aml learner: account %d facing %s is not ours", a, id)
			}
			l.facing[a] = true
		}
	}
	all := make([]int32, m)
	var trainLabels []uint8
	for e := range all {
		all[e] = int32(e)
		switch d.Split[e] {
		case graph.SplitTrain:
			l.train = append(l.train, int32(e))
			trainLabels = append(trainLabels, d.Graph.Label[e])
		case graph.SplitVal:
			if d.Home[e] {
				l.val = append(l.val, int32(e))
			}
		case graph.SplitTest:
			if d.Home[e] {
				l.test = append(l.test, int32(e))
			}
		}
	}
	if len(l.train) == 0 {
		return nil, fmt.Errorf("agent: aml learner: no training transactions")
	}
	feat := edgegnn.NewFeaturizer(d.Graph)
	if d.First != 0 || d.Last != 0 {
		feat.SetTimeRange(d.First, d.Last)
	}
	if cfg.Ports || cfg.TimeDeltas {
		feat.EnableOrder()
	}
	var err error
	if l.trainSt, err = edgegnn.NewStage(d.Graph, l.train, cfg.FanOut, feat); err != nil {
		return nil, fmt.Errorf("agent: aml learner: %w", err)
	}
	if l.evalSt, err = edgegnn.NewStage(d.Graph, all, cfg.FanOut, feat); err != nil {
		return nil, fmt.Errorf("agent: aml learner: %w", err)
	}
	l.weights = edgegnn.ClassWeights(trainLabels, 10)
	l.seeds = edgegnn.NewSeedStream(d.Graph, slices.Clone(l.train), cfg.PosFraction)
	l.shift = float32(l.seeds.Shift(cfg.BatchSize, float64(l.weights[1])))
	srng := rand.New(rand.NewPCG(cfg.Seed, 0x5a3e))
	l.valSample = edgegnn.SampleEval(d.Graph, l.val, cfg.EvalSample, srng)
	l.Init(0)
	return l, nil
}

// SchemaHash implements Learner.
func (l *Learner) SchemaHash() string { return gnn.SchemaHash(l.model.Params()) }

// NumParams implements Learner.
func (l *Learner) NumParams() int { return gnn.NumParams(l.model.Params()) }

// TrainSize implements Learner: the training transactions this bank sees.
func (l *Learner) TrainSize() int { return len(l.train) }

// Init implements Learner.
func (l *Learner) Init(seed uint64) {
	mc := edgegnn.DefaultConfig(l.cfg.Kind)
	mc.Hidden = l.cfg.Hidden
	mc.Ports, mc.TimeDeltas, mc.EgoIDs = l.cfg.Ports, l.cfg.TimeDeltas, l.cfg.EgoIDs
	m, err := edgegnn.NewModel(mc, rand.New(rand.NewPCG(seed, 0xed6e)))
	if err != nil {
		panic(fmt.Sprintf("agent: aml learner: validated config refused: %v", err))
	}
	l.model, l.opt = m, gnn.NewAdam(m.Params(), l.cfg.LR)
	l.est = make([]float32, gnn.NumParams(m.Params()))
}

// Params implements Learner.
func (l *Learner) Params() []float32 { return gnn.Flatten(l.model.Params()) }

// SetParams implements Learner.
func (l *Learner) SetParams(p []float32) error { return gnn.Unflatten(l.model.Params(), p) }

// Train implements Learner: steps mini-batches of training transactions,
// each through a worker of the process's pool (Config.Work).
func (l *Learner) Train(steps int) float64 {
	var loss float64
	for k := 0; k < steps; k++ {
		loss = l.step()
	}
	return loss
}

// step is one local step on a worker acquired for it.
func (l *Learner) step() float64 {
	seeds := l.seeds.Next(l.cfg.BatchSize, l.rng)
	w := l.work.Acquire(l.model)
	defer l.work.Release(w)
	b, m := &w.Batch, w.Model()
	var err error
	if w.Labels, err = l.trainSt.BatchOn(w, seeds, w.Labels, l.rng); err != nil {
		panic(fmt.Sprintf("agent: aml learner: sampling training seeds: %v", err))
	}
	gnn.ZeroGrad(l.model.Params())
	logits := m.Forward(b, l.layerOverrides(b, true), true, l.rng)
	if w.DLogits == nil || w.DLogits.Rows != logits.Rows || w.DLogits.Cols != logits.Cols {
		w.DLogits = gnn.New(logits.Rows, logits.Cols)
	}
	weights := l.weights
	if l.seeds.Stratified() {
		weights = nil // the batches carry the class balance; scoring shifts the margins back
	}
	loss := gnn.SoftmaxCrossEntropy(logits, w.Labels, nil, weights, w.DLogits)
	m.Backward(w.DLogits)
	if l.cfg.Opt == OptCEFed {
		l.sgdStep()
	} else {
		l.opt.Step()
	}
	l.recordLayers(m, b)
	return loss
}

// Neighbours implements Exchanger.
func (l *Learner) Neighbours() []string {
	ids := make([]string, 0, len(l.d.Peers))
	for id := range l.d.Peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Boundary implements Exchanger: the global ids of our accounts facing to
// with their release rows laid out by l.lay: layer 0, the account's
// features (release_features.go), and/or H̃^1..H̃^L (or their
// projections on the release bases, release_dims.go) once it has an
// estimate at every layer, each block a unit vector keeping its norm
// relative to our mean (packEstimate), the row of unit norm.
func (l *Learner) Boundary(to string) ([]int64, []float32, int) {
	L := len(l.cfg.FanOut)
	scale := l.meanPre
	if l.releasesFeatures() {
		scale = append([]float64{1}, l.meanPre...)
	}
	var ids []int64
	var rows, vals []float32
	for _, a := range l.d.Peers[to] {
		vals = vals[:0]
		if l.releasesFeatures() {
			vals = l.appendFeatures(vals, a)
		}
		if l.releasesHidden() {
			e, ok := l.own[a]
			if !ok || !e.complete(L) {
				continue
			}
			vals = append(vals, l.releaseEstimate(e.h, L)...)
		}
		ids = append(ids, l.d.Global[a])
		rows = packEstimate(rows, vals, scale, l.lay)
	}
	return ids, rows, l.lay.dim()
}

// Receive implements Exchanger: a release of rows laid out by l.lay. Each
// row is pooled with the account's earlier releases (poolRelease: hidden
// layers by PoolWeight's moving average, the unchanging features by their
// plain mean) in the compact remoteStore, and each block's reliability is
// measured on the pooled rows of this release (releaseAlpha); hidden
// layers are decoded when read (layerOverrides), features substituted
// into the stages at once (applyFeatures). rows is not kept.
func (l *Learner) Receive(from string, ids []int64, rows []float32, dim int) error {
	if dim != l.lay.dim() || len(rows) != dim*len(ids) {
		return fmt.Errorf("agent: aml learner: %d values for %d embeddings of width %d (want %v)", len(rows), len(ids), dim, l.lay)
	}
	if len(ids) == 0 {
		return nil
	}
	fresh := releaseAlpha(rows, len(ids), l.lay)
	minWeight := make([]float64, l.lay.blocks())
	for k := range minWeight {
		minWeight[k] = l.cfg.PoolWeight
	}
	if l.releasesFeatures() {
		// Features do not change over a job: every release of them is
		// worth the same, however clean, so they are pooled by their mean.
		minWeight[0], fresh[0] = 0, 0
	}
	pooled := make([]float32, 0, len(rows))
	var accts []int32
	for i, id := range ids {
		a, ok := l.byID[id]
		if !ok || l.d.Remote[a] != from {
			continue
		}
		row := rows[i*dim : (i+1)*dim]
		p := pooled[len(pooled) : len(pooled)+dim]
		if n := l.remote.count(a); n > 0 {
			l.remote.row(a, p)
			poolRelease(p, row, n+1, minWeight, fresh, l.lay)
		} else {
			copy(p, row)
		}
		l.remote.put(a, p, 1)
		pooled = pooled[:len(pooled)+dim]
		accts = append(accts, a)
	}
	if len(pooled) == 0 {
		return nil
	}
	alpha := releaseAlpha(pooled, len(accts), l.lay)
	l.alpha[from] = alpha
	if l.releasesFeatures() {
		blk := make([]float32, featureWidth+1)
		for _, a := range accts {
			l.remote.layer(a, 0, blk, 1)
			l.applyFeatures(a, blk, alpha[0], l.lay.blocks())
		}
	}
	return nil
}
