package agent

import (
	"context"
	"errors"
	"fmt"

	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
)

// exchangeState is what the machine keeps of its last embedding exchange:
// the inputs of its release, before normalization and noise, for
// calibration; their width; and the latest calibration recorded.
type exchangeState struct {
	lastReleased []float32
	dim          int
	calib        *privacy.Calibration
	// heldCalib is the calibration the gate held lastReleased's release
	// at (node budget only); heldIsLatest: it is also the latest recorded.
	heldCalib    *privacy.Calibration
	heldIsLatest bool
}

// exchange releases the boundary embeddings each neighbouring client needs,
// through the gate (normalized to the unit sphere, σ0 noise, per-node
// accounting), one PublishEmbeddings per neighbour. Each node is released
// once per exchange, however many banks it faces: every neighbour gets its
// rows of that one release (post-processing), so a hub account facing five
// banks is charged one release, not five.
func (m *Machine) exchange(ctx context.Context, up *PublishUpdate, out []MachineAction) ([]MachineAction, error) {
	round := up.Update.Round
	ex, ok := m.learner.(learner.Exchanger)
	if !ok || m.cfg.EmbSigma < 0 {
		return out, nil
	}
	if sch, ok := ex.(learner.ExchangeScheduler); ok && !sch.ExchangeDue(round) {
		return out, nil
	}
	type share struct {
		to   string
		rows []int // into the union
	}
	var (
		shares []share
		ids    []int64
		flat   []float32
		dim    int
		index  = map[int64]int{}
	)
	for _, to := range ex.Neighbours() {
		bids, rows, d := ex.Boundary(to)
		if len(bids) == 0 {
			continue
		}
		if dim != 0 && d != dim {
			return nil, fmt.Errorf("agent %s: boundary embeddings for %s have width %d, others %d", m.cfg.Client, to, d, dim)
		}
		dim = d
		sh := share{to: to}
		for i, id := range bids {
			j, seen := index[id]
			if !seen {
				j = len(ids)
				index[id] = j
				ids = append(ids, id)
				flat = append(flat, rows[i*dim:(i+1)*dim]...)
			}
			sh.rows = append(sh.rows, j)
		}
		shares = append(shares, sh)
	}
	if len(ids) == 0 || m.withheld[privacy.ChannelEmb] {
		return out, nil
	}
	// Calibrate before releasing, on the very embeddings about to go out
	// (their normalized inputs; see calibrate): a node budget held at a
	// measured percentile (privacy.Budget.NodeQ) then checks this release
	// at its own ρ, and chooses its σ0 from it (privacy/target.go). Such
	// a budget gets the exact calibration up to 5,000 embeddings, and
	// beyond that each of 1,000 sampled query embeddings gets its exact
	// k-th neighbour distance among all of them (the calibration in the
	// ledger says it was sampled); that stays the one the audit reads.
	// The exact calibration costs n² distances: at AMLworld scale (10⁵
	// boundary accounts a bank) it took more CPU than training. Without
	// a held budget the calibration is only reported: a cheaper one from
	// 500 queries once there are more than 2,000, and the final one as a
	// held budget's.
	held := m.gate.NodeBudget().NodeQ > 0
	opt := privacy.CalibrateOptions{MaxExact: 2000, Samples: 500, Seed: round}
	if held {
		opt = privacy.CalibrateOptions{MaxExact: heldCalibrationExact, Samples: heldCalibrationSamples, Seed: round}
	}
	out = append(out, m.calibrateRows(ctx, round, flat, dim, opt)...)
	m.exch.heldIsLatest = false
	sigma := m.cfg.EmbSigma
	if s, ok, err := m.gate.NodeSigma(); errors.Is(err, privacy.ErrBudgetExceeded) {
		m.withheld[privacy.ChannelEmb] = true
		return append(out, BudgetSpent{Round: round, Channel: privacy.ChannelEmb, Err: err}), nil
	} else if err != nil {
		return nil, fmt.Errorf("agent %s: σ0 for the node budget: %w", m.cfg.Client, err)
	} else if ok {
		sigma = s
	}
	rel, out, ok, err := m.release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: round, Flat: flat, Dim: dim,
		NodeIDs: ids, Sigma: sigma, Clip: 1}, out)
	if err != nil || !ok {
		return out, err
	}
	m.exch.lastReleased = append(m.exch.lastReleased[:0], flat...) // Calibrate normalizes
	m.exch.dim = dim
	if held {
		m.exch.heldCalib, m.exch.heldIsLatest = m.exch.calib, true
	}
	for _, sh := range shares {
		part, err := rel.Select(sh.rows)
		if err != nil {
			return nil, fmt.Errorf("agent %s: embeddings for %s: %w", m.cfg.Client, sh.to, err)
		}
		out = append(out, PublishEmbeddings{To: sh.to, Releases: []privacy.Entry{rel.Entry()},
			Embeddings: bus.Embeddings{Round: round, Layer: 1, Dim: dim, NodeIDs: part.NodeIDs(), Data: bus.FromReleased(part)}})
	}
	return out, nil
}

// The calibration a held node budget measures before each release (and
// every final one): exact up to heldCalibrationExact embeddings, else from
// heldCalibrationSamples query embeddings.
const (
	heldCalibrationExact   = 5000
	heldCalibrationSamples = 1000
)

// receive hands a neighbour's released embeddings to the learner.
func (m *Machine) receive(e EmbeddingsIn) []MachineAction {
	ex, ok := m.learner.(learner.Exchanger)
	if !ok {
		return nil
	}
	if err := ex.Receive(e.From, e.IDs, e.Rows, e.Dim); err != nil {
		return []MachineAction{Note{Warn: true, Round: e.Round, Msg: "embeddings from " + e.From + " refused by the learner", Err: err}}
	}
	return nil
}

// calibrate records the metric-DP distances of the embeddings released in
// the last exchange in the ledger, so that the audit can evaluate per-node
// ε from the ledger alone. Distances are between the normalized inputs of
// the mechanism, not its noisy outputs: metric DP protects an embedding
// against its neighbours in input space, and distances between noisy
// outputs grow as σ0·sqrt(2·dim) whatever the data, which would make ρ/σ0
// — and ε — a constant no amount of noise could lower. Failures are noted,
// not fatal: the audit then falls back to its own ρ.
//
// Under a node budget held at a measured percentile the last release's
// embeddings were calibrated just before it went out, at the distance the
// gate held its budget at: that calibration stays (or becomes again, when
// a later exchange was refused) the latest one, so that the audit
// evaluates the nodes at the ρ their budget was held at.
func (m *Machine) calibrate(ctx context.Context, round uint64, opt privacy.CalibrateOptions) []MachineAction {
	x := &m.exch
	if x.heldCalib != nil && m.gate.NodeBudget().NodeQ > 0 {
		if x.heldIsLatest {
			return nil
		}
		if _, err := m.gate.RecordCalibration(ctx, round, *x.heldCalib); err != nil {
			return []MachineAction{Note{Warn: true, Round: round, Msg: "calibration not recorded", Err: err}}
		}
		x.calib, x.heldIsLatest = x.heldCalib, true
		return nil
	}
	return m.calibrateRows(ctx, round, x.lastReleased, x.dim, opt)
}

// calibrateRows records the calibration of the rows flat (dim wide).
func (m *Machine) calibrateRows(ctx context.Context, round uint64, flat []float32, dim int, opt privacy.CalibrateOptions) []MachineAction {
	x := &m.exch
	if dim == 0 || len(flat) == 0 {
		return nil
	}
	opt.K = min(50, len(flat)/dim-1)
	if opt.K < 1 {
		return nil
	}
	c, err := privacy.Calibrate(flat, dim, opt)
	if err != nil {
		return []MachineAction{Note{Warn: true, Round: round, Msg: "calibration skipped", Err: err}}
	}
	if _, err := m.gate.RecordCalibration(ctx, round, c); err != nil {
		return []MachineAction{Note{Warn: true, Round: round, Msg: "calibration not recorded", Err: err}}
	}
	x.calib = &c
	return nil
}
