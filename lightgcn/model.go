package lightgcn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
	"graphfed/graph"
)

// Model is a LightGCN over one user–item training graph: the layer-0
// embeddings, the normalised adjacency, Adam's state and the step
// workspace. Not for concurrent use.
type Model struct {
	cfg          Config
	users, items int
	train        *graph.CSR // Users × Items
	prop         propagator
	e0, grad     *gnn.Tensor // (Users+Items) × Dim: layer 0 and its gradient
	opt          *adam

	// Step workspace: the batch's distinct nodes, their index+1 in nodes
	// (0: not in the batch), occurrences, final embeddings and gradients.
	nodes     []int32
	slot      []int32
	count     []int32
	fin, gfin []float32
}

// New returns a model for the training interactions train (Users × Items,
// sorted rows) initialised as cfg says.
func New(train *graph.CSR, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := NormalizedAdjacency(train)
	if err != nil {
		return nil, err
	}
	n := a.Rows
	m := &Model{cfg: cfg, users: train.Rows, items: train.Cols, train: train,
		prop: newPropagator(a, cfg.Layers, cfg.Dim),
		e0:   gnn.New(n, cfg.Dim), grad: gnn.New(n, cfg.Dim),
		opt: newAdam(n*cfg.Dim, cfg.LR), slot: make([]int32, n), count: make([]int32, n),
		// A batch has at most 3·Batch distinct nodes.
		fin: make([]float32, 0, min(n, 3*cfg.Batch)*cfg.Dim), gfin: make([]float32, 0, min(n, 3*cfg.Batch)*cfg.Dim)}
	m.initEmbeddings()
	return m, nil
}

// initEmbeddings fills layer 0 as cfg.Init says.
func (m *Model) initEmbeddings() {
	rng := rand.New(rand.NewPCG(m.cfg.Seed, 0x6c67))
	if m.cfg.Init == "normal" {
		for i := range m.e0.Data {
			m.e0.Data[i] = float32(rng.NormFloat64() * m.cfg.InitStd)
		}
		return
	}
	// torch's xavier_uniform_ on an n×d embedding: fan_in d, fan_out n.
	d := m.cfg.Dim
	for _, t := range []struct{ lo, n int }{{0, m.users}, {m.users, m.items}} {
		a := math.Sqrt(6 / float64(t.n+d))
		for i := range m.e0.Data[t.lo*d : (t.lo+t.n)*d] {
			m.e0.Data[t.lo*d+i] = float32((2*rng.Float64() - 1) * a)
		}
	}
}

// Users is the number of users (nodes 0..Users−1).
func (m *Model) Users() int { return m.users }

// Items is the number of items (nodes Users..Users+Items−1).
func (m *Model) Items() int { return m.items }

// Embeddings returns the layer-0 embeddings ((Users+Items) × Dim, users
// first), aliasing the model.
func (m *Model) Embeddings() *gnn.Tensor { return m.e0 }

// StepLoss is one step's mean BPR loss −log σ(x_ui − x_uj) and L2 term
// (the official code's reg_loss, before the factor Reg).
type StepLoss struct{ BPR, L2 float64 }

// Step takes one Adam step on the BPR triples (users[b], pos[b], neg[b]),
// item ids, and returns the batch's loss before the step.
func (m *Model) Step(users, pos, neg []int32) (StepLoss, error) {
	loss, err := m.gradient(users, pos, neg)
	if err != nil {
		return loss, err
	}
	m.opt.step(m.e0.Data, m.grad.Data)
	return loss, nil
}

// gradient sets m.grad to the gradient of the batch's loss
// BPR + Reg·L2 with respect to the layer-0 embeddings and returns the loss.
func (m *Model) gradient(users, pos, neg []int32) (StepLoss, error) {
	nb := len(users)
	if nb == 0 || len(pos) != nb || len(neg) != nb {
		return StepLoss{}, fmt.Errorf("lightgcn: step: %d users, %d positives, %d negatives", nb, len(pos), len(neg))
	}
	for b := range users {
		if uint(users[b]) >= uint(m.users) || uint(pos[b]) >= uint(m.items) || uint(neg[b]) >= uint(m.items) {
			return StepLoss{}, fmt.Errorf("lightgcn: step: triple %d (%d, %d, %d) outside %d users × %d items", b, users[b], pos[b], neg[b], m.users, m.items)
		}
	}
	d, nu := m.cfg.Dim, int32(m.users)
	m.nodes = m.nodes[:0]
	for b := range users {
		m.addNode(users[b])
		m.addNode(nu + pos[b])
		m.addNode(nu + neg[b])
	}
	ns := len(m.nodes)
	m.fin = grow(m.fin, ns*d)
	m.gfin = grow(m.gfin, ns*d)
	fin, gfin := gnn.NewFrom(ns, d, m.fin), gnn.NewFrom(ns, d, m.gfin)
	m.prop.forwardBatch(m.e0, m.nodes, fin)

	loss := m.bpr(users, pos, neg, fin, gfin)
	m.prop.backward(m.nodes, gfin, m.grad)
	// L2: λ·(‖e_u‖² + ‖e_i‖² + ‖e_j‖²)/(2·batch) has gradient λ·e/batch
	// per occurrence of a node in the batch.
	for _, s := range m.nodes {
		e := m.e0.Row(int(s))
		var sq float64
		for _, v := range e {
			sq += float64(v) * float64(v)
		}
		occ := float64(m.count[s])
		loss.L2 += occ * sq / 2
		g, a := m.grad.Row(int(s)), float32(m.cfg.Reg*occ/float64(nb))
		for c, v := range e {
			g[c] += a * v
		}
	}
	loss.L2 /= float64(nb)
	for _, s := range m.nodes {
		m.slot[s], m.count[s] = 0, 0
	}
	return loss, nil
}

// addNode adds node s to the batch's distinct nodes, counting it.
func (m *Model) addNode(s int32) {
	if m.slot[s] == 0 {
		m.nodes = append(m.nodes, s)
		m.slot[s] = int32(len(m.nodes))
	}
	m.count[s]++
}

// bpr sets gfin to the gradient of the mean BPR loss with respect to the
// final embeddings fin (rows in the order of m.nodes) and returns the loss.
func (m *Model) bpr(users, pos, neg []int32, fin, gfin *gnn.Tensor) StepLoss {
	clear(gfin.Data)
	nu, inv := int32(m.users), 1/float64(len(users))
	var loss float64
	for b := range users {
		ju, jp, jn := m.slot[users[b]]-1, m.slot[nu+pos[b]]-1, m.slot[nu+neg[b]]-1
		fu, fp, fn := fin.Row(int(ju)), fin.Row(int(jp)), fin.Row(int(jn))
		var xp, xn float64
		for c := range fu {
			xp += float64(fu[c]) * float64(fp[c])
			xn += float64(fu[c]) * float64(fn[c])
		}
		// −log σ(xp − xn) = softplus(xn − xp); its derivative in xn is
		// σ(xn − xp), in xp the opposite.
		z := xn - xp
		loss += softplus(z)
		s := float32(sigmoid(z) * inv)
		gu, gp, gn := gfin.Row(int(ju)), gfin.Row(int(jp)), gfin.Row(int(jn))
		for c := range fu {
			gu[c] += s * (fn[c] - fp[c])
			gp[c] -= s * fu[c]
			gn[c] += s * fu[c]
		}
	}
	return StepLoss{BPR: loss * inv}
}

func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// grow returns b resliced to n, reallocated only when too small.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// adam is gnn.Adam's update (PyTorch's torch.optim.Adam arithmetic) over
// one flat parameter, split across goroutines: LightGCN's gradient is
// dense over every embedding after propagation, and at Gowalla's 4.5M
// parameters a serial update is a tenth of a step.
type adam struct {
	lr, beta1, beta2, eps float64
	m, v                  []float32
	t                     int
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, m: make([]float32, n), v: make([]float32, n)}
}

// step applies one update to w from the gradient g (len(w)).
func (a *adam) step(w, g []float32) {
	a.t++
	bc1 := 1 - math.Pow(a.beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.beta2, float64(a.t))
	stepSize := float32(a.lr / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2 := float32(a.beta1), float32(a.beta2)
	c1, c2 := 1-b1, 1-b2
	eps := float32(a.eps)
	rows := func(lo, hi int) {
		w, g, m, v := w[lo:hi], g[lo:hi], a.m[lo:hi], a.v[lo:hi]
		g, m, v = g[:len(w)], m[:len(w)], v[:len(w)]
		for j, gj := range g {
			mj := b1*m[j] + c1*gj
			vj := b2*v[j] + c2*gj*gj
			m[j], v[j] = mj, vj
			w[j] -= stepSize * mj / (float32(math.Sqrt(float64(vj)))*invSqrtBC2 + eps)
		}
	}
	if p := gnn.ParallelWorkers(len(w), 8*len(w)); p > 1 {
		gnn.ParallelSplit(len(w), p, rows)
		return
	}
	rows(0, len(w))
}
