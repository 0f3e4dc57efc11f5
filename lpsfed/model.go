package lpsfed

import (
	"fmt"
	"math"
	"math/rand/v2"

	"graphfed/gnn"
)

// Model is one client's LPSFed recommender over its Data. It is not safe
// for concurrent use.
type Model struct {
	cfg  Config
	data *Data
	enc  *lowPass
	pred *predictor
	pop  *popularity // nil for LossBPR

	shared, all []*gnn.Param
	opt         *gnn.RMSProp
	rng         *rand.Rand
	smp         *sampler

	// global is the server's personalized margin M^c_updated (Eq. 14),
	// valid once hasGlobal.
	global    float64
	hasGlobal bool
	// marginSum/marginN accumulate M_ui over the positives of the last
	// Train call, for MeanMargin.
	marginSum float64
	marginN   int

	// batch state
	p        pairs
	nodeRow  []int32 // node → row of the batch, −1 when absent
	rows     []int32
	pu, pi   []int32 // all pairs as rows of z: the B positives, then the B·K negatives
	s, ds    []float64
	sPos     []float64 // s[:B]
	sNeg     []float64 // s[B:]
	dPos     []float64 // ds[:B]
	dNeg     []float64 // ds[B:]
	lPos     []float64
	lNeg     []float64
	dlPos    []float64
	dlNeg    []float64
	dz       *gnn.Tensor
	centre   []float64 // per positive: mean score of its candidate set
	margin   []float64 // per positive: its margin M_ui
	popU     []int32   // the batch's pairs for the popularity branch
	popI     []int32
	popV     []float64 // their cosines, then the cosines' gradients
	fixedXi  []float64 // tests: hold ξ̂ of the positives fixed in the BC loss
	evalUser []int32
}

// NewModel builds a client model. p (n×Φ, n = d.Nodes()) holds the Φ
// lowest-frequency eigenvectors of the client's normalized Laplacian as
// columns; it is kept, not copied. The federated MLPs start from seed 0
// until InitShared is called with the job's shared seed.
func NewModel(d *Data, p *gnn.Tensor, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if p == nil || p.Rows != d.Nodes() {
		return nil, fmt.Errorf("lpsfed: new model: eigenvectors for %d nodes, graph has %d", rowsOf(p), d.Nodes())
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x1f5fed))
	enc, err := newLowPass(p, cfg.Dim, cfg.Layers, cfg.PoolHidden, rng, cfg.InitStd)
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, data: d, enc: enc, pred: newPredictor(cfg.Dim, cfg.PredHidden), rng: rng}
	if cfg.Loss == LossBC {
		m.pop = newPopularity(d, cfg.Dim, rng, cfg.InitStd)
	}
	m.shared = append(enc.shared(), m.pred.params()...)
	m.all = append(append([]*gnn.Param(nil), m.shared...), enc.local()...)
	if m.pop != nil {
		m.all = append(m.all, m.pop.params()...)
	}
	m.InitShared(0)
	m.opt = gnn.NewRMSProp(m.all, cfg.LR)
	m.smp = newSampler(d, rng)
	m.nodeRow = make([]int32, d.Nodes())
	for i := range m.nodeRow {
		m.nodeRow[i] = -1
	}
	m.evalUser = evalUsers(d, cfg.EvalUsers, cfg.Seed)
	return m, nil
}

func rowsOf(t *gnn.Tensor) int {
	if t == nil {
		return 0
	}
	return t.Rows
}

// InitShared draws the federated MLPs from seed: clients given the same
// seed start from the same θ̄ (Algorithm 1, server initialization).
func (m *Model) InitShared(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	m.enc.initShared(rng)
	m.pred.initParams(rng)
}

// SharedParams returns the federated parameters (pooling MLP, then
// predictive MLP) in wire order.
func (m *Model) SharedParams() []*gnn.Param { return m.shared }

// Shared returns a copy of the federated parameters as one flat vector.
func (m *Model) Shared() []float32 { return gnn.Flatten(m.shared) }

// SetShared loads a flat vector of federated parameters.
func (m *Model) SetShared(v []float32) error {
	if err := gnn.Unflatten(m.shared, v); err != nil {
		return fmt.Errorf("lpsfed: set shared: %w", err)
	}
	return nil
}

// NumShared is the length of Shared.
func (m *Model) NumShared() int { return gnn.NumParams(m.shared) }

// SchemaHash identifies the federated parameters' layout.
func (m *Model) SchemaHash() string { return gnn.SchemaHash(m.shared) }

// SetGlobalMargin installs the server's personalized margin (Eq. 14),
// used by the BC loss from the next step on (Eq. 15).
func (m *Model) SetGlobalMargin(v float64) { m.global, m.hasGlobal = v, true }

// MeanMargin is M^c (Eq. 10) over the positives of the last Train call;
// false before any BC training.
func (m *Model) MeanMargin() (float64, bool) {
	if m.marginN == 0 {
		return 0, false
	}
	return m.marginSum / float64(m.marginN), true
}

// Train runs epochs passes over the training interactions and returns the
// mean loss of the last epoch.
func (m *Model) Train(epochs int) float64 {
	m.marginSum, m.marginN = 0, 0
	var last float64
	for range epochs {
		nb := m.smp.epochBatches(m.cfg.BatchSize)
		var sum float64
		for range nb {
			m.smp.batch(&m.p, m.cfg.BatchSize, m.cfg.Negatives)
			gnn.ZeroGrad(m.all)
			sum += m.batchLoss(&m.p, true)
			gnn.ApplyWeightDecay(m.all, m.cfg.WeightDecay)
			m.opt.Step()
		}
		last = sum / float64(max(nb, 1))
	}
	return last
}

// batchLoss returns the loss of batch p and, if grad, accumulates its
// gradients into every parameter (they are not cleared first).
func (m *Model) batchLoss(p *pairs, grad bool) float64 {
	z := m.forwardRows(p)
	b, nn := len(p.User), len(p.Neg)
	m.s, m.ds = growF64(m.s, b+nn), growF64(m.ds, b+nn)
	m.sPos, m.sNeg, m.dPos, m.dNeg = m.s[:b], m.s[b:], m.ds[:b], m.ds[b:]
	m.pred.prepare(z)
	m.pred.forward(z, m.pu, m.pi, m.s)
	var loss float64
	if m.cfg.Loss == LossBPR {
		loss = bpr(m.sPos, m.sNeg, p.K, m.dPos, m.dNeg)
	} else {
		loss = m.bcLoss(p, grad)
	}
	if !grad {
		return loss
	}
	dz := buf(&m.dz, z.Rows, z.Cols)
	dz.Zero()
	m.pred.backward(z, m.pu, m.pi, m.ds, dz)
	m.enc.backward(dz)
	return loss
}

// bcLoss is L_BC + L_bias (Eq. 9 and 7) from the scores of the batch. It
// sets the score gradients and, if grad, the popularity tables' gradients.
//
// The angles R̂ = arccos(tanh(s)) of the loss are taken of the scores
// centred over each positive's candidate set {i} ∪ N_u. Ranking a user's
// items by R̂ is unchanged by a per-user constant, but the loss is not
// shift-invariant: cos(R̂ + M̃) is flatter than tanh near either end, so
// with margins a shift of all scores lowers the loss in one direction
// and runs away until tanh saturates for every pair and no gradient is
// left (observed on Gowalla: scores drift to ±8, recall stalls at the
// first epoch's or falls to 0). The predictive MLP has such shift
// directions (its bias, the user-only block W_a); centring removes them.
func (m *Model) bcLoss(p *pairs, grad bool) float64 {
	b, k := len(p.User), p.K
	m.lPos, m.lNeg = growF64(m.lPos, b), growF64(m.lNeg, len(p.Neg))
	m.dlPos, m.dlNeg = growF64(m.dlPos, b), growF64(m.dlNeg, len(p.Neg))
	// Bias loss on the popularity cosines, over the pairs in the order
	// (positive 0, its negatives, positive 1, …).
	n := b * (k + 1)
	m.popU, m.popI, m.popV = growI32(m.popU, n), growI32(m.popI, n), growF64(m.popV, n)
	for i := range b {
		m.popU[i*(k+1)], m.popI[i*(k+1)] = p.User[i], p.Pos[i]
		for j := range k {
			m.popU[i*(k+1)+1+j], m.popI[i*(k+1)+1+j] = p.User[i], p.Neg[i*k+j]
		}
	}
	m.pop.batchCos(m.popU, m.popI, m.popV)
	for i := range b {
		m.lPos[i] = m.popV[i*(k+1)]
		copy(m.lNeg[i*k:(i+1)*k], m.popV[i*(k+1)+1:(i+1)*(k+1)])
	}
	lb := infoNCE(m.lPos, m.lNeg, k, m.cfg.Tau, m.dlPos, m.dlNeg)
	if grad {
		for i := range b {
			m.popV[i*(k+1)] = m.dlPos[i]
			copy(m.popV[i*(k+1)+1:(i+1)*(k+1)], m.dlNeg[i*k:(i+1)*k])
		}
		m.pop.backwardBatch(m.popU, m.popI, m.popV)
	}
	// BC loss, per positive and its candidate set (split across cores;
	// the margins M_ui are summed in order afterwards).
	m.centre, m.margin = growF64(m.centre, b), growF64(m.margin, b)
	parallelFor(b, parts(b, 64*(k+1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			// Centre the candidate set.
			c := m.sPos[i]
			for _, s := range m.sNeg[i*k : (i+1)*k] {
				c += s
			}
			m.centre[i] = c / float64(k+1)
			// Margins from ξ̂ of the positives (taken as constants).
			xi := angle(m.lPos[i])
			if m.fixedXi != nil {
				xi = m.fixedXi[i]
			}
			m.lPos[i], m.dlPos[i], m.margin[i] = bcPositive(m.sPos[i]-m.centre[i], xi, m.cfg.Gamma, m.cfg.Omega, m.global, m.hasGlobal, m.cfg.MarginFallback)
			for j := i * k; j < (i+1)*k; j++ {
				t := math.Tanh(m.sNeg[j] - m.centre[i])
				m.lNeg[j], m.dlNeg[j] = t, 1-t*t
			}
		}
	})
	if grad {
		for _, mi := range m.margin[:b] {
			m.marginSum += mi
			m.marginN++
		}
	}
	lbc := infoNCE(m.lPos, m.lNeg, k, m.cfg.Tau, m.dPos, m.dNeg)
	// Chain through the logits and the centring: ds_j = dŝ_j − mean(dŝ).
	parallelFor(b, parts(b, 4*(k+1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := m.dPos[i] * m.dlPos[i]
			m.dPos[i] = g
			sum := g
			neg := m.dNeg[i*k : (i+1)*k]
			for j := range neg {
				neg[j] *= m.dlNeg[i*k+j]
				sum += neg[j]
			}
			mean := sum / float64(k+1)
			m.dPos[i] -= mean
			for j := range neg {
				neg[j] -= mean
			}
		}
	})
	return lbc + lb
}

// forwardRows encodes the nodes the batch touches and maps its pairs to
// rows of the result. A batch touching most nodes encodes all of them,
// which skips the gathers.
func (m *Model) forwardRows(p *pairs) *gnn.Tensor {
	users := int32(m.data.Users)
	m.rows = m.rows[:0]
	add := func(node int32) int32 {
		if r := m.nodeRow[node]; r >= 0 {
			return r
		}
		r := int32(len(m.rows))
		m.nodeRow[node] = r
		m.rows = append(m.rows, node)
		return r
	}
	m.pu, m.pi = m.pu[:0], m.pi[:0]
	for i, u := range p.User {
		m.pu = append(m.pu, add(u))
		m.pi = append(m.pi, add(users+p.Pos[i]))
	}
	for i, u := range p.User {
		for j := range p.K {
			m.pu = append(m.pu, m.nodeRow[u])
			m.pi = append(m.pi, add(users+p.Neg[i*p.K+j]))
		}
	}
	for _, v := range m.rows {
		m.nodeRow[v] = -1
	}
	if 2*len(m.rows) < m.data.Nodes() {
		return m.enc.forward(m.rows)
	}
	// Whole graph: rows become node ids.
	for _, s := range [][]int32{m.pu, m.pi} {
		for i, r := range s {
			s[i] = m.rows[r]
		}
	}
	return m.enc.forward(nil)
}

func growF64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
