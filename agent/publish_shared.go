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
// accounting), straight to that client on gf.<job>.emb.<from>.<to>.
func (a *Agent) exchange(ctx context.Context, round uint64) error {
	ex, ok := a.learner.(Exchanger)
	if !ok || a.cfg.EmbSigma < 0 {
		return nil
	}
	a.lastReleased = a.lastReleased[:0]
	for _, to := range ex.Neighbours() {
		ids, rows, dim := ex.Boundary(to)
		if len(ids) == 0 {
			continue
		}
		rel, err := a.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: round, Flat: rows, Dim: dim,
			NodeIDs: ids, Sigma: a.cfg.EmbSigma, Clip: 1})
		if errors.Is(err, privacy.ErrBudgetExceeded) {
			a.cfg.Log.Warn().Err(err).Str("to", to).Uint64("round", round).Msg("embedding budget spent: not released")
			continue
		}
		if err != nil {
			return fmt.Errorf("agent %s: release embeddings to %s: %w", a.cfg.Client, to, err)
		}
		data := bus.FromReleased(rel)
		a.lastReleased = append(a.lastReleased, rows...) // Calibrate normalizes
		a.embDim = dim
		body := &bus.Embeddings{Round: round, Layer: 1, Dim: dim, NodeIDs: rel.NodeIDs(), Data: data}
		if err := a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindEmb, a.cfg.Client, to), bus.KindEmb, round, body); err != nil {
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
	if a.embDim == 0 || len(a.lastReleased) == 0 {
		return
	}
	n := len(a.lastReleased) / a.embDim
	k := min(50, n-1)
	if k < 1 {
		return
	}
	c, err := privacy.Calibrate(a.lastReleased, a.embDim, privacy.CalibrateOptions{K: k})
	if err != nil {
		a.cfg.Log.Warn().Err(err).Msg("calibration skipped")
		return
	}
	if _, err := a.gate.RecordCalibration(ctx, a.trained, c); err != nil {
		a.cfg.Log.Warn().Err(err).Msg("calibration not recorded")
		return
	}
	a.calib = &c
}
