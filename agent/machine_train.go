package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
)

// Defaults of the gated channels. σ1 is CE-FedGNN's 1e-3. Its model clip
// of 15 suits its small AML model but binds on a Cora GCN (1433×16 first
// layer), where clipping the whole parameter vector every round shrinks the
// model towards zero (FedAvg on Cora/Louvain-10: 0.43 at 15, 0.59 at 50 or
// more); 100 leaves common models unclipped. A binding clip is noted. σ2 on
// the gradient estimator is 1e-3 as in the paper (clipped like the model),
// σ0 on normalized boundary embeddings 0.1, σ on LPSFed's scalars 1e-3.
const (
	DefaultModelSigma  = 1e-3
	DefaultModelClip   = 100
	DefaultGradSigma   = 1e-3
	DefaultEmbSigma    = 0.1
	DefaultMarginSigma = 1e-3
	// DefaultDescriptorSigma is σ on FedGSP's descriptor rows, the
	// utility setting of the other channels: a directions' coordinate is
	// about 1/sqrt(Dim) (0.026 on Cora), so 1e-3 keeps them and claims no
	// meaningful ε (sensitivity 2·sqrt(4·K·kpr), 18.3 on Cora's K=7,
	// kpr=3); a σ that buys one swamps the directions.
	DefaultDescriptorSigma = 1e-3
)

// train runs one round: scores of the model it starts from (every
// EvalEvery rounds), local training, then the releases in a fixed order —
// parameters, gradient estimator, boundary embeddings (before the update,
// so that neighbours usually hold them before the next round opens),
// scalars — and the update last.
func (m *Machine) train(ctx context.Context, round, modelRound uint64) ([]MachineAction, error) {
	var out []MachineAction
	if m.shares() && modelRound > 0 && m.modelRound != modelRound {
		out = append(out, Note{Warn: true, Round: round, Msg: fmt.Sprintf("training from the model of round %d, want %d", m.modelRound, modelRound)})
	}
	if err := m.load(); err != nil {
		return nil, err
	}
	base := uint64(0)
	if m.shares() && m.loaded > 0 {
		base = m.loaded
	}
	if every := m.cfg.EvalEvery; every > 0 && (round-1)%uint64(every) == 0 {
		out = append(out, PublishMetrics{Metrics: bus.Metrics{Round: round, Scores: m.learner.Evaluate()}})
	}
	loss := m.learner.Train(m.cfg.LocalEpochs)
	m.trained = round
	m.rounds++
	up := PublishUpdate{Update: bus.Update{Round: round, BaseRound: base, Weight: float64(m.learner.TrainSize()), Loss: loss}}
	if !m.shares() {
		up.Update.Ledger = bus.NewLedgerRef(m.gate.Head())
		return append(out, up), nil
	}
	for _, step := range []func(context.Context, *PublishUpdate, []MachineAction) ([]MachineAction, error){
		m.releaseModel, m.releaseGrad, m.exchange, m.releaseScalars, m.releaseDescriptors,
	} {
		var err error
		out, err = step(ctx, &up, out)
		if errors.Is(err, privacy.ErrAlreadyReleased) {
			// The ledger holds this round's release already, from an
			// earlier life whose append was stored only after this one
			// read its chain: had the read come a moment later, Start
			// would have counted the round as trained then. So it is
			// now: nothing more is released or sent for it.
			return append(out, Note{Warn: true, Round: round, Err: err,
				Msg: "round released in an earlier life (its ledger entry was stored after this life read the ledger): not released again, no update sent"}), nil
		}
		if err != nil {
			return nil, err
		}
	}
	up.Update.Withheld = m.withheld[privacy.ChannelModel]
	// A secure round's vectors go into its sum (machine_secure.go).
	m.holdForSecure(&up)
	// The head after this round's releases: the aggregator's round
	// record repeats it, so that losing them from the ledger shows.
	up.Update.Ledger = bus.NewLedgerRef(m.gate.Head())
	return append(out, up), nil
}

// release passes one value through the gate. A budget refusal is not an
// error: it closes the channel (BudgetSpent) and returns false. A release
// the ledger holds already, from an earlier life (privacy.ErrAlreadyReleased),
// is recorded as released and returned as an error wrapping that kind,
// with out, for train to end the round on.
func (m *Machine) release(ctx context.Context, req privacy.Request, out []MachineAction) (privacy.Released, []MachineAction, bool, error) {
	if m.withheld[req.Channel] {
		return privacy.Released{}, out, false, nil
	}
	rel, err := m.gate.Release(ctx, req)
	switch {
	case errors.Is(err, privacy.ErrBudgetExceeded):
		m.withheld[req.Channel] = true
		return privacy.Released{}, append(out, BudgetSpent{Round: req.Round, Channel: req.Channel, Err: err}), false, nil
	case errors.Is(err, privacy.ErrAlreadyReleased):
		m.released[req.Channel] = max(m.released[req.Channel], req.Round)
		if dr, ok := m.learner.(learner.DescriptorReleaser); ok && req.Channel == privacy.ChannelDescriptor {
			dr.DescriptorsReleased() // as Start does for one found in the ledger
		}
		return privacy.Released{}, out, false, fmt.Errorf("agent %s: release %s of round %d: %w", m.cfg.Client, req.Channel, req.Round, err)
	case err != nil:
		return privacy.Released{}, nil, false, fmt.Errorf("agent %s: release %s of round %d: %w", m.cfg.Client, req.Channel, req.Round, err)
	}
	m.released[req.Channel] = max(m.released[req.Channel], req.Round)
	return rel, out, true, nil
}

// releaseModel attaches the gated parameters to up.
func (m *Machine) releaseModel(ctx context.Context, up *PublishUpdate, out []MachineAction) ([]MachineAction, error) {
	p := m.learner.Params()
	if n := l2norm(p); n > m.cfg.ModelClip && !m.clipWarned && !m.withheld[privacy.ChannelModel] {
		m.clipWarned = true
		out = append(out, Note{Warn: true, Round: up.Update.Round, Msg: fmt.Sprintf(
			"model clip binds (norm %.4g, clip %.4g): released parameters are scaled down (raise --model-clip if this hurts accuracy)", n, m.cfg.ModelClip)})
	}
	rel, out, ok, err := m.release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: up.Update.Round, Flat: p, Dim: len(p),
		Sigma: m.cfg.ModelSigma, Clip: m.cfg.ModelClip}, out)
	if err != nil {
		return out, err
	}
	if ok {
		up.Update.Params = bus.FromReleased(rel)
		up.Releases = append(up.Releases, rel.Entry())
	}
	return out, nil
}

// releaseGrad attaches the gated gradient estimator, when the learner
// shares one (a non-empty Grad). A refusal withholds the parameters too, so that W and G stay
// a consistent pair at the aggregator.
func (m *Machine) releaseGrad(ctx context.Context, up *PublishUpdate, out []MachineAction) ([]MachineAction, error) {
	gs, ok := m.learner.(learner.GradSharer)
	if !ok || m.withheld[privacy.ChannelModel] {
		return out, nil
	}
	g := gs.Grad()
	if len(g) == 0 {
		return out, nil // the learner keeps or shares no estimator in this job
	}
	rel, out, ok, err := m.release(ctx, privacy.Request{Channel: privacy.ChannelGrad, Round: up.Update.Round, Flat: g, Dim: len(g),
		Sigma: m.cfg.GradSigma, Clip: m.cfg.ModelClip}, out)
	if err != nil {
		return out, err
	}
	if !ok {
		m.withheld[privacy.ChannelModel] = true
		up.Update.Params, up.Releases = bus.Sensitive{}, nil
		return out, nil
	}
	up.Update.Grad = bus.FromReleased(rel)
	up.Releases = append(up.Releases, rel.Entry())
	return out, nil
}

// releaseScalars attaches a ScalarReleaser's scalars (LPSFed's ρ_c and
// M^c), released on the margin channel only with parameters that went out.
func (m *Machine) releaseScalars(ctx context.Context, up *PublishUpdate, out []MachineAction) ([]MachineAction, error) {
	sr, ok := m.learner.(learner.ScalarReleaser)
	if !ok || m.withheld[privacy.ChannelModel] {
		return out, nil
	}
	for _, s := range sr.Scalars(up.Update.Round) {
		rel, o, ok, err := m.release(ctx, privacy.Request{Channel: privacy.ChannelMargin, Round: up.Update.Round,
			Flat: []float32{float32(s.Value)}, Dim: 1, Sigma: m.cfg.MarginSigma, Clip: s.Clip}, out)
		out = o
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		switch s.Kind {
		case learner.ScalarRho:
			up.Update.Rho, up.Update.RhoVersion = bus.FromReleased(rel), s.Version
		case learner.ScalarMargin:
			up.Update.Margin = bus.FromReleased(rel)
		default:
			return nil, fmt.Errorf("agent %s: release scalar: unknown kind %q", m.cfg.Client, s.Kind)
		}
		up.Releases = append(up.Releases, rel.Entry())
		sr.ScalarReleased(s)
	}
	return out, nil
}

// releaseDescriptors attaches a DescriptorReleaser's descriptors to the
// first update it sends: once, through the gate on ChannelDescriptor,
// whether or not the parameters went out (the descriptors are a release
// of their own). A release found in the ledger at Start is never made
// again; a budget refusal closes the channel and the update goes without.
func (m *Machine) releaseDescriptors(ctx context.Context, up *PublishUpdate, out []MachineAction) ([]MachineAction, error) {
	dr, ok := m.learner.(learner.DescriptorReleaser)
	if !ok {
		return out, nil
	}
	if _, done := m.released[privacy.ChannelDescriptor]; done {
		return out, nil
	}
	if r, done := m.gate.LastRound(privacy.ChannelDescriptor); done {
		// Released in an earlier life, and stored only after this one read
		// the ledger: the gate adopted that entry when it refused one of
		// this life's appends over it (privacy.Gate.Release). As Start does
		// for one found in the ledger: never again.
		m.released[privacy.ChannelDescriptor] = r
		dr.DescriptorsReleased()
		return out, nil
	}
	d, ok := dr.Descriptors()
	if !ok {
		return out, nil
	}
	if d.Orders < 1 || d.Principal < 1 || d.Dim < 1 || len(d.Rows) != 4*d.Orders*d.Principal*d.Dim {
		return nil, fmt.Errorf("agent %s: release descriptors: %d values for 4·%d·%d rows of %d", m.cfg.Client, len(d.Rows), d.Orders, d.Principal, d.Dim)
	}
	rel, out, ok, err := m.release(ctx, privacy.Request{Channel: privacy.ChannelDescriptor, Round: up.Update.Round,
		Flat: slices.Clone(d.Rows), Dim: d.Dim, Sigma: m.cfg.DescriptorSigma, Clip: 1}, out)
	if err != nil || !ok {
		return out, err
	}
	up.Update.Descriptors = bus.FromReleased(rel)
	up.Update.DescOrders, up.Update.DescPrincipal, up.Update.DescDim = d.Orders, d.Principal, d.Dim
	up.Releases = append(up.Releases, rel.Entry())
	dr.DescriptorsReleased()
	return out, nil
}

func l2norm(p []float32) float64 {
	var s float64
	for _, x := range p {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
