package aggregator

import (
	"encoding/json"
	"fmt"
)

// meanStrategy is FedAvg and, with the clients' gradient estimators
// averaged alongside, CE-FedGNN and FedGNN-ST: the sample-weighted average
// (or the robust rule's) of the round's updates and the late ones folded
// in goes to every client, or, with a server optimizer (server_opt.go),
// the optimizer's step from the current global model towards it. Its state
// is the optimizer's moments; the machine keeps the latest model.
type meanStrategy struct {
	robust Robust
	opt    ServerOpt
	st     serverOptState
}

func (*meanStrategy) Join(Join) string                       { return "" }
func (*meanStrategy) Check(u UpdateIn, numParams int) string { return checkShape(u, numParams) }
func (*meanStrategy) FoldsLate() bool                        { return true }
func (*meanStrategy) Open(uint64) string                     { return "" }
func (*meanStrategy) Payload() []byte                        { return nil }
func (s *meanStrategy) State() (json.RawMessage, error)      { return s.opt.state(s.st) }

func (s *meanStrategy) SetState(raw json.RawMessage, _ []string) error {
	st, err := s.opt.setState(raw)
	if err != nil {
		return err
	}
	s.st = st
	return nil
}

// checkNumParams vets the restored moments against the job's parameters
// (Restore knows them only after SetState).
func (s *meanStrategy) checkNumParams(n int) error {
	if s.st.M != nil && len(s.st.M) != n {
		return fmt.Errorf("server optimizer state: moments of %d values, the job has %d parameters", len(s.st.M), n)
	}
	return nil
}

func (s *meanStrategy) Close(in CloseInput) Outcome {
	out := s.mean(in)
	if len(out.Models) == 1 {
		out.Models[0].Params = s.optimize(in, out.Models[0].Params)
	}
	return out
}

// optimize is the server optimizer's new global model from the round's
// mean. It is the mean itself without an optimizer; in a frozen round (its
// model is not published, so the global model does not move and neither
// may the moments); and while there is no global model to step from:
// Flower steps the first round from initial parameters the server holds,
// graphfed's clients start from a shared seed the server holds no model
// of, so the first mean is the first global model. Only the parameters are
// stepped: the gradient estimator G of CE-FedGNN estimates the global
// gradient at the published model, it is no model to be moved, and the
// clients' correction needs it unbiased: it stays the plain mean.
func (s *meanStrategy) optimize(in CloseInput, mean []float32) []float32 {
	if s.opt.Rule == ServerOptNone || in.Frozen || len(in.Global) != len(mean) || len(mean) == 0 {
		return mean
	}
	return s.opt.step(&s.st, in.Global, mean)
}

// mean is the round's aggregate, before any server optimizer.
func (s *meanStrategy) mean(in CloseInput) Outcome {
	if in.Secure {
		// The mean of the survivors, as the secure sum decoded it; a
		// robust rule is refused with secure aggregation (Config).
		if in.Sum == nil {
			return Outcome{}
		}
		return Outcome{Weight: in.Sum.Weight, Models: []PublishModel{{Params: in.Sum.Params, Grad: in.Sum.Grad}}}
	}
	cs := append(append([]Contribution(nil), in.In...), in.Stale...)
	avg, total, aside := s.robust.aggregate(cs, in.NumParams, func(c Contribution) []float32 { return c.Params })
	if avg == nil {
		return Outcome{}
	}
	// What the rule set aside is counted on the parameters alone: the
	// estimators come from the same senders, and counting both would say
	// nothing more.
	grad, _, _ := s.robust.aggregate(cs, in.NumParams, func(c Contribution) []float32 { return c.Grad })
	return Outcome{Weight: total, Models: []PublishModel{{Params: avg, Grad: grad}}, SetAside: aside}
}

// localStrategy is no federation: rounds pace the clients, who send
// nothing (or anything: it is not looked at) and get nothing back.
type localStrategy struct{}

func (localStrategy) Join(Join) string                               { return "" }
func (localStrategy) Check(UpdateIn, int) string                     { return "" }
func (localStrategy) FoldsLate() bool                                { return false }
func (localStrategy) Open(uint64) string                             { return "" }
func (localStrategy) Payload() []byte                                { return nil }
func (localStrategy) Close(CloseInput) Outcome                       { return Outcome{} }
func (localStrategy) State() (json.RawMessage, error)                { return nil, nil }
func (localStrategy) SetState(raw json.RawMessage, _ []string) error { return noState(raw) }

// noState refuses state given to a strategy that keeps none.
func noState(raw json.RawMessage) error {
	if len(raw) != 0 && string(raw) != "null" {
		return fmt.Errorf("the strategy keeps no state, the snapshot holds %d bytes of it", len(raw))
	}
	return nil
}

// weightedAverage returns Σ w_i·θ_i / Σ w_i, accumulated in float64 in
// client-id order so that the result does not depend on arrival order:
// the final model must be a deterministic function of the seed.
func weightedAverage(cs []Contribution, n int) ([]float32, float64) {
	return average(cs, n, func(c Contribution) []float32 { return c.Params })
}

// weightedGradAverage averages the gradient estimators of the contributions
// that carry one, with the same weights; nil when none does.
func weightedGradAverage(cs []Contribution, n int) []float32 {
	g, _ := average(cs, n, func(c Contribution) []float32 { return c.Grad })
	return g
}
