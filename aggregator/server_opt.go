package aggregator

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Server optimizers of the averaging strategies (issue 32; Reddi et al.
// 2021, "Adaptive Federated Optimization", and Hsu et al. 2019 for
// FedAvgM): the round's mean is not published as is but read as a
// pseudo-gradient Δ = mean − x, x the current global model, which a
// server-side optimizer steps x along. The updates are Flower's
// (flwr/server/strategy/fedavgm.py, fedadam.py, fedyogi.py, fedadagrad.py,
// adap/flower), without bias correction, as the versions read for this
// write them:
//
//	FedAvgM:    m ← μ·m + Δ;                 x ← x + η·m
//	FedAdam:    m ← β1·m + (1−β1)·Δ;  v ← β2·v + (1−β2)·Δ²
//	FedYogi:    m as FedAdam;         v ← v − (1−β2)·Δ²·sign(v − Δ²)
//	FedAdagrad: m as FedAdam;         v ← v + Δ²
//	adaptive:   x ← x + η·m / (√v + τ)
const (
	ServerOptNone       = ""           // the mean is the new global model (FedAvg)
	ServerOptFedAvgM    = "fedavgm"    // server momentum
	ServerOptFedAdam    = "fedadam"    // Adam on the pseudo-gradient
	ServerOptFedYogi    = "fedyogi"    // Yogi on the pseudo-gradient
	ServerOptFedAdagrad = "fedadagrad" // Adagrad on the pseudo-gradient
)

// ServerOptRules are the server optimizers, for flags and errors.
func ServerOptRules() []string {
	return []string{ServerOptFedAvgM, ServerOptFedAdam, ServerOptFedYogi, ServerOptFedAdagrad}
}

// ServerOpt is the averaging strategies' server optimizer. Every
// hyper-parameter is explicit (DefaultServerOpt gives Flower's): a zero
// momentum or β1 is meaningful, so zero cannot stand for "the default",
// and the snapshot's configuration then says exactly what ran.
type ServerOpt struct {
	Rule     string  `json:",omitempty"`
	LR       float64 `json:",omitempty"` // η, the server learning rate
	Momentum float64 `json:",omitempty"` // μ, FedAvgM's
	Beta1    float64 `json:",omitempty"` // the adaptive rules' first moment decay
	Beta2    float64 `json:",omitempty"` // FedAdam's and FedYogi's second moment decay
	Tau      float64 `json:",omitempty"` // τ, the adaptive rules' degree of adaptability
}

// DefaultServerOpt is rule with Flower's defaults: FedAvgM
// server_learning_rate=1.0 and, instead of Flower's server_momentum=0.0
// (which is plain FedAvg), μ=0.9, Hsu et al.'s choice; FedAdam and
// FedYogi eta=1e-1, beta_1=0.9, beta_2=0.99, tau=1e-9; FedAdagrad
// eta=1e-1, tau=1e-9 and Flower's fixed beta_1=0. An unknown rule comes
// back as is, for Validate to refuse.
func DefaultServerOpt(rule string) ServerOpt {
	switch rule {
	case ServerOptFedAvgM:
		return ServerOpt{Rule: rule, LR: 1, Momentum: 0.9}
	case ServerOptFedAdam, ServerOptFedYogi:
		return ServerOpt{Rule: rule, LR: 0.1, Beta1: 0.9, Beta2: 0.99, Tau: 1e-9}
	case ServerOptFedAdagrad:
		return ServerOpt{Rule: rule, LR: 0.1, Tau: 1e-9}
	}
	return ServerOpt{Rule: rule}
}

// String names the optimizer and its hyper-parameters (job summaries).
func (o ServerOpt) String() string {
	switch o.Rule {
	case ServerOptNone:
		return "none"
	case ServerOptFedAvgM:
		return fmt.Sprintf("fedavgm(lr=%g, momentum=%g)", o.LR, o.Momentum)
	case ServerOptFedAdagrad:
		return fmt.Sprintf("fedadagrad(lr=%g, beta1=%g, tau=%g)", o.LR, o.Beta1, o.Tau)
	}
	return fmt.Sprintf("%s(lr=%g, beta1=%g, beta2=%g, tau=%g)", o.Rule, o.LR, o.Beta1, o.Beta2, o.Tau)
}

func (o ServerOpt) validate(algo string) error {
	const op = "aggregator: config: server optimizer"
	for _, p := range []struct {
		name string
		v    float64
	}{{"lr", o.LR}, {"momentum", o.Momentum}, {"beta1", o.Beta1}, {"beta2", o.Beta2}, {"tau", o.Tau}} {
		if !finite(p.v) || p.v < 0 {
			return fmt.Errorf("%s: %s %v must be finite and non-negative", op, p.name, p.v)
		}
	}
	// uses: the hyper-parameters the rule reads; one it does not is
	// refused rather than ignored, as a mistyped rule would be.
	var uses map[string]bool
	switch o.Rule {
	case ServerOptNone:
		if o != (ServerOpt{}) {
			return fmt.Errorf("%s: hyper-parameters (lr %v, momentum %v, beta1 %v, beta2 %v, tau %v) without a rule (want one of %v)",
				op, o.LR, o.Momentum, o.Beta1, o.Beta2, o.Tau, ServerOptRules())
		}
		return nil
	case ServerOptFedAvgM:
		uses = map[string]bool{"momentum": true}
	case ServerOptFedAdam, ServerOptFedYogi:
		uses = map[string]bool{"beta1": true, "beta2": true, "tau": true}
	case ServerOptFedAdagrad:
		uses = map[string]bool{"beta1": true, "tau": true}
	default:
		return fmt.Errorf("%s: unknown rule %q (want one of %v)", op, o.Rule, ServerOptRules())
	}
	for name, v := range map[string]float64{"momentum": o.Momentum, "beta1": o.Beta1, "beta2": o.Beta2, "tau": o.Tau} {
		if !uses[name] && v != 0 {
			return fmt.Errorf("%s: %s has no %s (got %v)", op, o.Rule, name, v)
		}
	}
	switch {
	case o.LR == 0:
		return fmt.Errorf("%s: %s needs lr > 0", op, o.Rule)
	case o.Momentum >= 1, o.Beta1 >= 1, o.Beta2 >= 1:
		return fmt.Errorf("%s: %s: momentum, beta1 and beta2 must be below 1 (got %v, %v, %v)", op, o.Rule, o.Momentum, o.Beta1, o.Beta2)
	case uses["tau"] && o.Tau == 0:
		// τ = 0 divides by √v = 0 where a coordinate never moved.
		return fmt.Errorf("%s: %s needs tau > 0", op, o.Rule)
	}
	if _, ok := newStrategyNoRobust(algo).(*meanStrategy); !ok {
		// The personalizing and clustering strategies publish no single
		// mean to take a step from, and local publishes nothing.
		return fmt.Errorf("%s: %s is for the averaging algorithms (fedavg, cefedgnn, fedgnn-st, fedprox, fedper), not %s", op, o.Rule, algo)
	}
	return nil
}

// serverOptState is a server optimizer's memory: its first and second
// moments (nil until its first step; FedAvgM keeps no V) and how many
// steps it took. float64, like the accumulation: a snapshot must restore
// the very values.
type serverOptState struct {
	Step uint64    `json:"step"`
	M    []float64 `json:"m,omitempty"`
	V    []float64 `json:"v,omitempty"`
}

// step takes the optimizer's step from the global model x to the round's
// mean, updating the state, and returns the new global model. Each
// coordinate is computed on its own, in float64, in index order: the result
// is a deterministic function of x, mean and the state. A step that would
// leave float32's range (a diverging optimizer, or moments a snapshot
// brought) is not taken: the mean is published, as in a first round, and
// the moments start over from it, so that no client is sent an infinite
// model.
func (o ServerOpt) step(st *serverOptState, x, mean []float32) []float32 {
	n := len(x)
	m, v := slices.Clone(st.M), slices.Clone(st.V)
	if m == nil {
		m = make([]float64, n)
		if o.Rule != ServerOptFedAvgM {
			v = make([]float64, n)
		}
	}
	out := make([]float32, n)
	for j := range n {
		xj := float64(x[j])
		d := float64(mean[j]) - xj
		var y float64
		if o.Rule == ServerOptFedAvgM {
			m[j] = o.Momentum*m[j] + d
			y = xj + o.LR*m[j]
		} else {
			m[j] = o.Beta1*m[j] + (1-o.Beta1)*d
			d2 := d * d
			switch o.Rule {
			case ServerOptFedAdam:
				v[j] = o.Beta2*v[j] + (1-o.Beta2)*d2
			case ServerOptFedYogi:
				v[j] -= (1 - o.Beta2) * d2 * sign(v[j]-d2)
			case ServerOptFedAdagrad:
				v[j] += d2
			}
			y = xj + o.LR*m[j]/(math.Sqrt(v[j])+o.Tau)
		}
		out[j] = float32(y)
		if f := float64(out[j]); !finite(f) || !finite(m[j]) || v != nil && !finite(v[j]) {
			*st = serverOptState{}
			return mean
		}
	}
	st.M, st.V, st.Step = m, v, st.Step+1
	return out
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// state exports the optimizer's memory; nil when there is no optimizer.
func (o ServerOpt) state(st serverOptState) (json.RawMessage, error) {
	if o.Rule == ServerOptNone {
		return nil, nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("server optimizer state: %w", err)
	}
	return b, nil
}

// setState takes back what state exported. The moments' length is checked
// against the job's parameters by checkNumParams, once Restore knows them.
func (o ServerOpt) setState(raw json.RawMessage) (serverOptState, error) {
	var st serverOptState
	if o.Rule == ServerOptNone {
		return st, noState(raw)
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, fmt.Errorf("server optimizer state: %w", err)
		}
	}
	wantV := o.Rule != ServerOptFedAvgM
	switch {
	case st.Step == 0 && (st.M != nil || st.V != nil):
		return st, fmt.Errorf("server optimizer state: moments before the first step")
	case st.Step > 0 && (st.M == nil || wantV != (st.V != nil) || wantV && len(st.V) != len(st.M)):
		return st, fmt.Errorf("server optimizer state: %s after %d steps has moments of %d and %d values", o.Rule, st.Step, len(st.M), len(st.V))
	case !allFinite(st.M) || !allFinite(st.V):
		return st, fmt.Errorf("server optimizer state: moment value not finite")
	}
	for _, v := range st.V {
		if v < 0 {
			// Every rule keeps v ≥ 0 (Yogi's v moves towards Δ² ≥ 0 by at
			// most the gap); a negative one would take √ of it.
			return st, fmt.Errorf("server optimizer state: negative second moment %v", v)
		}
	}
	return st, nil
}
