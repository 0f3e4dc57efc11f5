package agent

import (
	"fmt"
	"math"

	"graphfed/bus"
	"graphfed/learner"
)

// ModelNormFactor is how far above the largest update norm the job can
// produce a received model's norm may be. Every update the aggregator
// accepts is clipped to ModelClip before noise of σ·sqrt(d) (the
// aggregator refuses larger ones: aggregator.Contract.MaxNorm), and a
// global model is a weighted mean of them, so its norm is within that
// bound; the factor leaves room for mixings that are not convex
// (personalized models) and for parties whose clip is larger than this
// one's, while a model of 1e30s is still far outside.
const ModelNormFactor = 16

// maxNorm is the largest norm of a received vector of d values whose
// parties add noise σ after the clip: ModelNormFactor times the
// aggregator's bound (clip + σ·(2·sqrt(d) + 10)).
func (m *Machine) maxNorm(sigma float64, d int) float64 {
	return ModelNormFactor * (m.cfg.ModelClip + sigma*(2*math.Sqrt(float64(d))+10))
}

// checkModel says why a received model is outside what the job can
// produce ("" when it is not), with the bus reject reason: its parameters'
// or gradient estimator's norm, or a gradient estimator this bank's
// learner shares none of (loading it would fail, and used to stop the
// agent). Finiteness and shape are checked by the validator.
func (m *Machine) checkModel(e ModelIn) (reason, why string) {
	if n, max := l2norm(e.Params), m.maxNorm(m.cfg.ModelSigma, len(e.Params)); !(n <= max) {
		return bus.ReasonNorm, fmt.Sprintf("parameters of norm %.4g above the job's bound %.4g", n, max)
	}
	if len(e.Grad) == 0 {
		return "", ""
	}
	if gs, ok := m.learner.(learner.GradSharer); !ok || len(gs.Grad()) == 0 {
		return bus.ReasonGrad, fmt.Sprintf("a gradient estimator of %d values, and this bank's learner shares none", len(e.Grad))
	}
	if n, max := l2norm(e.Grad), m.maxNorm(m.cfg.GradSigma, len(e.Grad)); !(n <= max) {
		return bus.ReasonNorm, fmt.Sprintf("gradient estimator of norm %.4g above the job's bound %.4g", n, max)
	}
	return "", ""
}

// badModel refuses a received model: the agent keeps its last good one
// and trains on, counts the refusal and says so once per round.
func (m *Machine) badModel(round uint64, reason, why string) []MachineAction {
	m.badModels++
	m.badReasons = append(m.badReasons, reason)
	if m.badModels > 1 && m.badNoted == round {
		return nil
	}
	m.badNoted = round
	keep := "its own initial model"
	if m.model != nil {
		keep = fmt.Sprintf("the model of round %d", m.modelRound)
	}
	return []MachineAction{Note{Warn: true, Round: round, Msg: fmt.Sprintf(
		"rejected model of round %d: %s; keeping %s (%d refused so far)", round, why, keep, m.badModels)}}
}

// BadModels is how many received models were refused for their values.
func (m *Machine) BadModels() uint64 { return m.badModels }

// TakeBadReasons returns the bus reject reasons of the models refused
// since it was last called, in order, and forgets them.
func (m *Machine) TakeBadReasons() []string {
	r := m.badReasons
	m.badReasons = nil
	return r
}
