package agent

import (
	"context"
	"errors"
	"fmt"

	"graphfed/bus"
	"graphfed/privacy"
)

// Defaults for CE-FedGNN's other gated channels: σ2 on the gradient
// estimator (1e-3 as in the paper, clipped like the model) and σ0 on
// normalized boundary embeddings.
const (
	DefaultGradSigma = 1e-3
	DefaultEmbSigma  = 0.1
)

// releaseGrad passes the learner's gradient estimator through the gate
// into u, when the learner shares one.
func (a *Agent) releaseGrad(ctx context.Context, round uint64, u *bus.Update) error {
	gs, ok := a.learner.(GradSharer)
	if !ok || u.Withheld {
		return nil
	}
	g := gs.Grad()
	rel, err := a.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelGrad, Round: round, Flat: g, Dim: len(g),
		Sigma: a.cfg.GradSigma, Clip: a.cfg.ModelClip})
	switch {
	case errors.Is(err, privacy.ErrBudgetExceeded):
		// The parameters went out but the estimator may not: send neither,
		// so that W and G stay a consistent pair at the aggregator.
		a.withheld, u.Withheld = true, true
		u.Params = bus.Sensitive{}
		a.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("privacy budget spent: updates withheld from now on")
		return nil
	case err != nil:
		return fmt.Errorf("agent %s: release grad: %w", a.cfg.Client, err)
	}
	u.Grad = bus.FromReleased(rel)
	return nil
}

// exchange releases the boundary embeddings each neighbouring client needs,
// through the gate (normalized to the unit sphere, σ0 noise, per-node
// accounting), straight to that client on gf.<job>.emb.<from>.<to>. Each
// node is released once per exchange, however many banks it faces: every
// neighbour gets its rows of that one release (post-processing), so a hub
// account facing five banks is charged one release, not five.
func (a *Agent) exchange(ctx context.Context, round uint64) error {
	ex, ok := a.learner.(Exchanger)
	if !ok || a.cfg.EmbSigma < 0 {
		return nil
	}
	if sch, ok := ex.(ExchangeScheduler); ok && !sch.ExchangeDue(round) {
		return nil
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
			return fmt.Errorf("agent %s: boundary embeddings for %s have width %d, others %d", a.cfg.Client, to, d, dim)
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
	a.lastReleased = a.lastReleased[:0]
	if len(ids) == 0 {
		return nil
	}
	rel, err := a.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: round, Flat: flat, Dim: dim,
		NodeIDs: ids, Sigma: a.cfg.EmbSigma, Clip: 1})
	if errors.Is(err, privacy.ErrBudgetExceeded) {
		a.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("embedding budget spent: not released")
		return nil
	}
	if err != nil {
		return fmt.Errorf("agent %s: release embeddings: %w", a.cfg.Client, err)
	}
	a.lastReleased = append(a.lastReleased, flat...) // Calibrate normalizes
	a.embDim = dim
	defer a.calibrateSampled(ctx, round)
	for _, sh := range shares {
		part, err := rel.Select(sh.rows)
		if err != nil {
			return fmt.Errorf("agent %s: embeddings for %s: %w", a.cfg.Client, sh.to, err)
		}
		body := &bus.Embeddings{Round: round, Layer: 1, Dim: dim, NodeIDs: part.NodeIDs(), Data: bus.FromReleased(part)}
		if err := a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindEmb, a.cfg.Client, sh.to), bus.KindEmb, round, body); err != nil {
			return err
		}
	}
	return nil
}

// receive hands a neighbour's released embeddings to the learner.
func (a *Agent) receive(from string, e *bus.Embeddings) {
	ex, ok := a.learner.(Exchanger)
	if !ok {
		return
	}
	if err := ex.Receive(from, e.NodeIDs, e.Data.Floats(), e.Dim); err != nil {
		a.cfg.Log.Warn().Err(err).Str("from", from).Msg("embeddings refused by the learner")
	}
}

// calibrate records the metric-DP distances of the embeddings released in
// the last exchange in the ledger, so that the audit can evaluate per-node ε
// from the ledger alone. Distances are between the normalized inputs of the
// mechanism, not its noisy outputs: metric DP protects an embedding against
// its neighbours in input space, and distances between noisy outputs grow
// as σ0·sqrt(2·dim) whatever the data, which would make ρ/σ0 — and ε — a
// constant no amount of noise could lower.
func (a *Agent) calibrate(ctx context.Context) {
	a.recordCalibration(ctx, a.trained, privacy.CalibrateOptions{})
}

// calibrateSampled records a cheaper calibration after an exchange, from a
// sample of query embeddings once there are more than 2,000, so that the
// per-round ε the job reports rests on a measured ρ; the final calibration
// is exact.
func (a *Agent) calibrateSampled(ctx context.Context, round uint64) {
	a.recordCalibration(ctx, round, privacy.CalibrateOptions{MaxExact: 2000, Samples: 500, Seed: round})
}

func (a *Agent) recordCalibration(ctx context.Context, round uint64, opt privacy.CalibrateOptions) {
	if a.embDim == 0 || len(a.lastReleased) == 0 {
		return
	}
	n := len(a.lastReleased) / a.embDim
	opt.K = min(50, n-1)
	if opt.K < 1 {
		return
	}
	c, err := privacy.Calibrate(a.lastReleased, a.embDim, opt)
	if err != nil {
		a.cfg.Log.Warn().Err(err).Msg("calibration skipped")
		return
	}
	if _, err := a.gate.RecordCalibration(ctx, round, c); err != nil {
		a.cfg.Log.Warn().Err(err).Msg("calibration not recorded")
		return
	}
	a.calib = &c
}
