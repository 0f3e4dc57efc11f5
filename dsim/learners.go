package dsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/learner"
)

// The simulator's learners: agent.LogisticLearner (a real model, cheap and
// a pure function of its seeds) with the capabilities each strategy's
// learners have, so that the machine drives every channel: CE-FedGNN's
// gradient estimator and boundary embeddings, LPSFed's counts, reference
// kernel, ρ, margin and personalized margin, FedGSP's descriptors.

// nodesPerAgent is how many graph nodes each agent owns; agent i owns the
// global ids i*100 .. i*100+nodesPerAgent-1.
const nodesPerAgent = 8

// exchangeLearner is a CE-FedGNN-shaped learner (learner.Exchanger and
// learner.GradSharer): it releases an embedding of each boundary node, a
// function of its parameters, to each neighbour, and lets the embeddings
// it receives nudge its parameters after training.
type exchangeLearner struct {
	*agent.LogisticLearner
	self       int
	neighbours []string
	index      map[string]int // neighbour id -> agent index
	dim        int
	recv       []float64 // the mean of the rows received since the last round, per column
	nrecv      int
	grad       []float32
}

var (
	_ learner.Exchanger  = (*exchangeLearner)(nil)
	_ learner.GradSharer = (*exchangeLearner)(nil)
)

func newExchangeLearner(l *agent.LogisticLearner, self int, neighbours map[string]int, dim int) *exchangeLearner {
	ids := make([]string, 0, len(neighbours))
	for id := range neighbours {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	x := &exchangeLearner{LogisticLearner: l, self: self, neighbours: ids, index: neighbours, dim: dim}
	x.Init(0)
	return x
}

// Init implements learner.Learner: a fresh model forgets what it received.
func (x *exchangeLearner) Init(seed uint64) {
	x.LogisticLearner.Init(seed)
	x.recv, x.nrecv = make([]float64, x.dim), 0
	x.grad = make([]float32, x.NumParams())
}

// Neighbours implements learner.Exchanger.
func (x *exchangeLearner) Neighbours() []string { return slices.Clone(x.neighbours) }

// Boundary implements learner.Exchanger: the nodes adjacent to neighbour
// to's (every other one of ours, by its index's parity), and their
// embeddings.
func (x *exchangeLearner) Boundary(to string) ([]int64, []float32, int) {
	j, ok := x.index[to]
	if !ok {
		return nil, nil, x.dim
	}
	w := x.Params()
	var ids []int64
	var rows []float32
	for k := range nodesPerAgent {
		if (k+j)%2 != 0 {
			continue
		}
		ids = append(ids, int64(x.self*100+k))
		for c := range x.dim {
			rows = append(rows, float32(math.Tanh(float64(w[(c+k)%len(w)])+0.1*float64(k%5+c))))
		}
	}
	return ids, rows, x.dim
}

// Receive implements learner.Exchanger.
func (x *exchangeLearner) Receive(from string, ids []int64, rows []float32, dim int) error {
	if _, ok := x.index[from]; !ok {
		return fmt.Errorf("dsim: embeddings from %s, not a neighbour", from)
	}
	if dim != x.dim || len(rows) != len(ids)*dim {
		return fmt.Errorf("dsim: embeddings of width %d (%d values for %d nodes), want width %d", dim, len(rows), len(ids), x.dim)
	}
	for i, v := range rows {
		x.recv[i%dim] += float64(v)
	}
	x.nrecv += len(ids)
	return nil
}

// Train implements learner.Learner: logistic training, then the received
// embeddings' mean nudges the parameters; the gradient estimator is a
// moving average of the steps taken.
func (x *exchangeLearner) Train(epochs int) float64 {
	before := x.Params()
	loss := x.LogisticLearner.Train(epochs)
	p := x.Params()
	if x.nrecv > 0 {
		for i := range p {
			p[i] += float32(1e-3 * x.recv[i%x.dim] / float64(x.nrecv))
		}
		_ = x.SetParams(p) // same length
		clear(x.recv)
		x.nrecv = 0
	}
	for i := range x.grad {
		x.grad[i] = 0.5*x.grad[i] + 0.5*(before[i]-p[i])
	}
	return loss
}

// Grad implements learner.GradSharer.
func (x *exchangeLearner) Grad() []float32 { return slices.Clone(x.grad) }

// SetGrad implements learner.GradSharer.
func (x *exchangeLearner) SetGrad(g []float32) error {
	if len(g) != len(x.grad) {
		return fmt.Errorf("dsim: gradient estimator of %d values, want %d", len(g), len(x.grad))
	}
	copy(x.grad, g)
	return nil
}

// lpsfedLearner is an LPSFed-shaped learner (the capabilities of
// lpsfed.Learner): it announces subgraph counts, takes the reference
// kernel, releases ρ = KL(K^R‖K^c) once per kernel version and, under
// lpsfed (not lpsfed-bpr), a mean margin every round, and lets its
// personalized margin nudge its bias.
type lpsfedLearner struct {
	*agent.LogisticLearner
	users, items, edges int
	algo                string
	kernel              []float64
	version, sent       uint64 // the kernel's version, and the one ρ was last released for
	margin              float64
}

var (
	_ learner.AlgoReceiver         = (*lpsfedLearner)(nil)
	_ learner.HelloCounter         = (*lpsfedLearner)(nil)
	_ learner.RoundPayloadReceiver = (*lpsfedLearner)(nil)
	_ learner.ScalarReleaser       = (*lpsfedLearner)(nil)
	_ learner.MarginReceiver       = (*lpsfedLearner)(nil)
)

func newLPSFedLearner(l *agent.LogisticLearner, users, items, edges int) *lpsfedLearner {
	return &lpsfedLearner{LogisticLearner: l, users: users, items: items, edges: edges}
}

// Init implements learner.Learner: a restarted client knows no kernel and
// no margin, as a rebuilt process would not.
func (p *lpsfedLearner) Init(seed uint64) {
	p.LogisticLearner.Init(seed)
	p.kernel, p.version, p.sent, p.margin = nil, 0, 0, 0
}

// SetAlgo implements learner.AlgoReceiver.
func (p *lpsfedLearner) SetAlgo(algo string) error {
	if algo != aggregator.AlgoLPSFed && algo != aggregator.AlgoLPSFedBPR {
		return fmt.Errorf("dsim: lpsfed learner in a %s job", algo)
	}
	p.algo = algo
	return nil
}

// HelloCounts implements learner.HelloCounter.
func (p *lpsfedLearner) HelloCounts() (int, int, int) { return p.users, p.items, p.edges }

// SetReference implements learner.RoundPayloadReceiver.
func (p *lpsfedLearner) SetReference(version uint64, kernel []float64) {
	p.kernel, p.version = slices.Clone(kernel), version
}

// SetMargin implements learner.MarginReceiver.
func (p *lpsfedLearner) SetMargin(m float64) { p.margin = m }

// Train implements learner.Learner: the personalized margin shifts the bias.
func (p *lpsfedLearner) Train(epochs int) float64 {
	loss := p.LogisticLearner.Train(epochs)
	w := p.Params()
	w[len(w)-1] += float32(1e-2 * p.margin)
	_ = p.SetParams(w) // same length
	return loss
}

// Scalars implements learner.ScalarReleaser.
func (p *lpsfedLearner) Scalars(round uint64) []learner.Scalar {
	var out []learner.Scalar
	if p.kernel != nil && p.version != p.sent {
		out = append(out, learner.Scalar{Kind: learner.ScalarRho, Value: p.rho(), Clip: 10, Version: p.version})
	}
	if p.algo == aggregator.AlgoLPSFed {
		var m float64
		w := p.Params()
		for _, v := range w {
			m += float64(v)
		}
		out = append(out, learner.Scalar{Kind: learner.ScalarMargin, Value: math.Tanh(m / float64(len(w))), Clip: 1})
	}
	return out
}

// ScalarReleased implements learner.ScalarReleaser.
func (p *lpsfedLearner) ScalarReleased(s learner.Scalar) {
	if s.Kind == learner.ScalarRho {
		p.sent = s.Version
	}
}

// rho is KL(K^R‖K^c) between the normalized reference kernel and the
// client's own, a decay at its own edge density.
func (p *lpsfedLearner) rho() float64 {
	own := kernel(p.users, p.items, p.edges, len(p.kernel), 1)
	return kl(p.kernel, own)
}

// kernel is a cheap stand-in for a low-pass kernel over phi frequencies:
// a decay at the graph's edge density.
func kernel(users, items, edges, phi int, scale float64) []float64 {
	k := make([]float64, phi)
	d := float64(edges) / float64(users+items+1) * 3 / float64(phi) * scale
	for i := range k {
		k[i] = math.Exp(-float64(i+1) * d)
	}
	return k
}

func kl(p, q []float64) float64 {
	var sp, sq float64
	for i := range p {
		sp, sq = sp+p[i], sq+q[i]
	}
	var d float64
	for i := range p {
		a, b := p[i]/sp, q[i]/sq
		d += a * math.Log(a/b)
	}
	return d
}

// referenceKernel is the simulator's aggregator.ReferenceKernel: cheap,
// and deterministic in its inputs, as the machine requires.
func referenceKernel(s aggregator.ReferenceStats, phi int, seed uint64) ([]float64, error) {
	if s.Users < 1 || s.Items < 1 || s.Edges < 1 {
		return nil, fmt.Errorf("dsim: reference kernel: counts %+v", s)
	}
	return kernel(s.Users, s.Items, s.Edges, phi, 1+float64(seed%5)/10), nil
}

// fedgspLearner is a FedGSP-shaped learner (the capabilities of
// fedgsp.Learner): it releases its spectral descriptors once, with the
// first update it sends (learner.DescriptorReleaser), and trains on the
// personalized model the aggregator mixes for it. Its descriptors are a
// function of its data seed, in two groups of clients (by index parity)
// whose directions are alike, so that the aggregator learns graphs that
// are not uniform.
type fedgspLearner struct {
	*agent.LogisticLearner
	desc     learner.Descriptor
	released bool
}

var (
	_ learner.DescriptorReleaser = (*fedgspLearner)(nil)
	_ learner.AlgoReceiver       = (*fedgspLearner)(nil)
	_ restartable                = (*fedgspLearner)(nil)
)

func newFedGSPLearner(l *agent.LogisticLearner, self int, cfg *Config) *fedgspLearner {
	d := learner.Descriptor{Orders: cfg.DescOrders, Principal: cfg.DescPrincipal, Dim: cfg.DescDim}
	group := rand.New(rand.NewPCG(cfg.Seed, 0x65b+uint64(self%2)))
	own := rand.New(rand.NewPCG(cfg.Seed, 0x65c0+uint64(self)))
	d.Rows = make([]float32, 4*d.Orders*d.Principal*d.Dim)
	for at := 0; at < len(d.Rows); at += d.Dim {
		row := d.Rows[at : at+d.Dim]
		var n float64
		for i := range row {
			row[i] = float32(group.NormFloat64() + 0.3*own.NormFloat64())
			n += float64(row[i]) * float64(row[i])
		}
		for i := range row {
			row[i] /= float32(math.Sqrt(n) + 1e-12) // unit directions, as the contract's
		}
	}
	return &fedgspLearner{LogisticLearner: l, desc: d}
}

// SetAlgo implements learner.AlgoReceiver.
func (f *fedgspLearner) SetAlgo(algo string) error {
	if algo != aggregator.AlgoFedGSP {
		return fmt.Errorf("dsim: fedgsp learner in a %s job", algo)
	}
	return nil
}

// Descriptors implements learner.DescriptorReleaser: the same rows every
// time until they went out.
func (f *fedgspLearner) Descriptors() (learner.Descriptor, bool) {
	if f.released {
		return learner.Descriptor{}, false
	}
	d := f.desc
	d.Rows = slices.Clone(d.Rows)
	return d, true
}

// DescriptorsReleased implements learner.DescriptorReleaser.
func (f *fedgspLearner) DescriptorsReleased() { f.released = true }

// restart implements restartable: a rebuilt FedGSP process computes its
// descriptors afresh and knows nothing of their release but what its
// agent finds in the ledger.
func (f *fedgspLearner) restart() { f.released = false }

// restartable is a simulator learner that outlives its agent's crashes
// (the simulator keeps one learner per agent) but holds state a restarted
// process would not have: the simulator calls restart at every crash, so
// that the next life starts from what a rebuilt process knows.
type restartable interface{ restart() }
