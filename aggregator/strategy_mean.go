package aggregator

import (
	"encoding/json"
	"fmt"
)

// meanStrategy is FedAvg and, with the clients' gradient estimators
// averaged alongside, CE-FedGNN and FedGNN-ST: the sample-weighted average
// of the round's updates and the late ones folded in goes to every
// client. It keeps no state: the machine keeps the latest model.
type meanStrategy struct{ robust Robust }

func (meanStrategy) Join(Join) string                       { return "" }
func (meanStrategy) Check(u UpdateIn, numParams int) string { return checkShape(u, numParams) }
func (meanStrategy) FoldsLate() bool                        { return true }
func (meanStrategy) Open(uint64) string                     { return "" }
func (meanStrategy) Payload() []byte                        { return nil }
func (meanStrategy) State() (json.RawMessage, error)        { return nil, nil }

func (meanStrategy) SetState(raw json.RawMessage, _ []string) error { return noState(raw) }

func (s meanStrategy) Close(in CloseInput) Outcome {
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
