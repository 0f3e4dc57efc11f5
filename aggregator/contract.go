package aggregator

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"graphfed/bus"
)

// Contract is what a job fixes before any hello (issue 29): the model
// schema every party holds, the largest training size a party may
// declare, and the clip and noise its releases were made with, which
// bound every update's norm. The zero value fixes nothing: the first
// accepted hello sets the schema (from a party the job enrols) and no
// norm is bounded.
type Contract struct {
	SchemaHash string `json:",omitempty"`
	NumParams  int    `json:",omitempty"`
	// MaxTrainSize bounds the training size a hello declares (an update's
	// weight is capped at its sender's declared size); 0: MaxWeight.
	MaxTrainSize float64 `json:",omitempty"`
	// Clip is the model clip C of the parties' privacy gates (released
	// parameters and gradient estimators are clipped to it before noise);
	// Sigma and GradSigma the noise σ1 and σ2 added after it. Clip 0
	// bounds no norm.
	Clip      float64 `json:",omitempty"`
	Sigma     float64 `json:",omitempty"`
	GradSigma float64 `json:",omitempty"`
	// Grad says whether updates carry a gradient estimator: GradNone
	// refuses one, GradShared takes it, "" decides by the algorithm alone
	// (only CE-FedGNN and FedGNN-ST average one). A job whose learners
	// share none must say GradNone: otherwise one signed update carrying
	// an estimator put one in the global model, and every agent whose
	// learner has none to load it into stopped (issue 29's by-hand
	// re-run).
	Grad string `json:",omitempty"`
}

// Gradient-estimator policies of a contract (Contract.Grad).
const (
	GradNone   = "none"
	GradShared = "shared"
)

// Norm headroom. A released vector is x + z with ||x|| ≤ C and z ~
// N(0, σ²I_d), so ||z|| concentrates at σ·sqrt(d) with a standard deviation
// below σ: NormNoiseFactor·σ·sqrt(d) + NormNoiseSlack·σ leaves the noise
// about 10 standard deviations (more for large d) before an honest update
// is refused, while a hijacking update (norm 1e30, or any multiple of the
// clip worth the name) is far outside.
const (
	NormNoiseFactor = 2
	NormNoiseSlack  = 10
)

// Fixed reports whether the contract names the schema.
func (c Contract) Fixed() bool { return c.SchemaHash != "" }

// MaxNorm is the largest L2 norm of a released vector of d values with
// noise σ (+Inf when the contract bounds no norm).
func (c Contract) MaxNorm(sigma float64, d int) float64 {
	if c.Clip <= 0 {
		return math.Inf(1)
	}
	return c.Clip*(1+1e-6) + sigma*(NormNoiseFactor*math.Sqrt(float64(d))+NormNoiseSlack)
}

// maxTrainSize is the job's bound on a declared training size.
func (c Contract) maxTrainSize() float64 {
	if c.MaxTrainSize > 0 {
		return c.MaxTrainSize
	}
	return MaxWeight
}

func (c Contract) validate() error {
	var errs []error
	if c.SchemaHash == "" && c.NumParams != 0 || c.SchemaHash != "" && c.NumParams < 1 {
		errs = append(errs, fmt.Errorf("schema %q of %d parameters: want a hash and a positive count, or neither", c.SchemaHash, c.NumParams))
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"max train size", c.MaxTrainSize}, {"clip", c.Clip}, {"sigma", c.Sigma}, {"grad sigma", c.GradSigma}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			errs = append(errs, fmt.Errorf("%s %v must be finite and not negative", v.name, v.x))
		}
	}
	if c.Grad != "" && c.Grad != GradNone && c.Grad != GradShared {
		errs = append(errs, fmt.Errorf("grad %q: want %s or %s", c.Grad, GradNone, GradShared))
	}
	if c.MaxTrainSize > MaxWeight {
		errs = append(errs, fmt.Errorf("max train size %v above %v", c.MaxTrainSize, MaxWeight))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("aggregator: config: contract: %w", err)
	}
	return nil
}

// ParseSchema reads HASH:PARAMS (the --schema flag).
func ParseSchema(s string) (hash string, params int, err error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok || h == "" {
		return "", 0, fmt.Errorf("aggregator: schema %q: want HASH:PARAMS", s)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("aggregator: schema %q: parameter count %q is not a positive integer", s, p)
	}
	return h, n, nil
}

// l2 is the L2 norm of x, in float64.
func l2(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// checkContract vets an update's weight and norms against the contract and
// its sender's hello: "" or the bus reject reason, with the detail.
func (m *Machine) checkContract(e UpdateIn, c *clientState) (reason, detail string) {
	if e.Weight > c.weight {
		return bus.ReasonWeight, fmt.Sprintf("weight %g above the %g samples declared at its hello", e.Weight, c.weight)
	}
	k := m.cfg.Contract
	if n, max := l2(e.Params), k.MaxNorm(k.Sigma, len(e.Params)); len(e.Params) > 0 && !(n <= max) {
		return bus.ReasonNorm, fmt.Sprintf("parameters of norm %.4g above the job's bound %.4g (clip %g)", n, max, k.Clip)
	}
	if len(e.Grad) > 0 && !m.takesGrad() {
		return bus.ReasonGrad, fmt.Sprintf("a gradient estimator of %d values; the job's learners share none (%s, contract grad %q)",
			len(e.Grad), m.cfg.Algo, k.Grad)
	}
	if n, max := l2(e.Grad), k.MaxNorm(k.GradSigma, len(e.Grad)); len(e.Grad) > 0 && !(n <= max) {
		return bus.ReasonNorm, fmt.Sprintf("gradient estimator of norm %.4g above the job's bound %.4g (clip %g)", n, max, k.Clip)
	}
	return "", ""
}

// takesGrad reports whether the job averages gradient estimators: only
// the algorithms that do (CE-FedGNN, FedGNN-ST), unless the contract says
// the learners share none.
func (m *Machine) takesGrad() bool {
	if m.cfg.Contract.Grad == GradNone {
		return false
	}
	return m.cfg.Algo == AlgoCEFedGNN || m.cfg.Algo == AlgoFedGNNST
}

// Rejected says that a signed message of a party broke the job's contract
// (a hello of another schema or training size, an update of too much
// weight or norm): the driver counts it against its sender with the bus
// reject reason, beside the validators' rejects.
type Rejected struct {
	Client string
	Round  uint64
	Reason string // bus.ReasonSchema, ReasonWeight, ReasonNorm, ReasonGrad
	Detail string
}

func (Rejected) isAction() {}

// FixContract fixes the job's contract before Run, for a driver that
// learns it after building the server (a simulation reads it off the
// parties' learners and gates); a contract already fixed must agree.
func (s *Server) FixContract(c Contract) error {
	const op = "aggregator: fix contract"
	if err := c.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	m := s.machine
	if m.round != 0 || len(m.clients) > 0 {
		return fmt.Errorf("%s: the job has started", op)
	}
	if k := m.cfg.Contract; k.Fixed() && (k.SchemaHash != c.SchemaHash || k.NumParams != c.NumParams) {
		return fmt.Errorf("%s: schema %s/%d, the job's is %s/%d", op, c.SchemaHash, c.NumParams, k.SchemaHash, k.NumParams)
	}
	m.cfg.Contract, s.cfg.Round.Contract = c, c
	m.schemaHash, m.numParams = c.SchemaHash, c.NumParams
	s.ep.Validator().SetNumParams(c.NumParams)
	if s.cfg.Round.SecAgg.On {
		// The masked vector's exact length, now that the schema is known
		// (CE-FedGNN's W and G are 2·NumParams + 1 words).
		s.ep.Validator().SetSecAgg(&bus.SecAggSchema{Words: SecAggWords(s.cfg.Round), Vectors: secAggVectors(s.cfg.Round)})
	}
	return nil
}
