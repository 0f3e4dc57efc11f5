package scenarios

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/dsim"
)

// Scenario is a named end-to-end check of the system under one kind of
// stress, reporting pass or fail and the invariant that failed. `graphfed
// scenario run NAME|all` runs them from a Registry.
type Scenario struct {
	Name string // [a-z0-9-]{1,64}, not "all"
	Doc  string // one line for `graphfed scenario list`
	// DefaultSeeds is how many seeds a seeded scenario sweeps when not
	// told; 0 marks a scenario that runs once (it may still use the seed).
	DefaultSeeds int
	// Run runs the scenario. An error means it could not run (a server
	// would not start); a broken invariant is a failing Outcome.
	Run func(ctx context.Context, o ScenarioOptions) (Outcome, error)
}

// ScenarioOptions are what a run may vary.
type ScenarioOptions struct {
	Seed    uint64 // the first (or only) seed
	Seeds   int    // seeds to sweep; 0: the scenario's DefaultSeeds
	Workers int    // parallel seeds for the simulator sweeps; 0: 1
	Log     zerolog.Logger
}

// Outcome is one scenario's verdict, as the CLI reports it.
type Outcome struct {
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	// FailedInvariant names the first invariant that broke ("" on a pass;
	// "error" when the scenario could not run).
	FailedInvariant string `json:"failed_invariant"`
	Detail          string `json:"detail,omitempty"`
	// Repro is the one-line command that reproduces a failure.
	Repro   string             `json:"repro,omitempty"`
	Seeds   int                `json:"seeds,omitempty"`
	Seconds float64            `json:"seconds"` // wall time, filled in by the caller that timed it
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// fail returns a failing outcome for invariant inv.
func fail(name, inv, format string, args ...any) Outcome {
	return Outcome{Name: name, FailedInvariant: inv, Detail: fmt.Sprintf(format, args...)}
}

// Registry holds scenarios by name, in registration order.
type Registry struct {
	list   []Scenario
	byName map[string]int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]int{}} }

// Register adds a scenario; names are unique.
func (r *Registry) Register(s Scenario) error {
	switch {
	case !bus.ValidID(s.Name) || s.Name == "all":
		return fmt.Errorf("scenarios: register: name %q is not [a-z0-9-]{1,64} or is reserved", s.Name)
	case s.Run == nil:
		return fmt.Errorf("scenarios: register %s: no Run", s.Name)
	}
	if _, dup := r.byName[s.Name]; dup {
		return fmt.Errorf("scenarios: register %s: already registered", s.Name)
	}
	r.byName[s.Name] = len(r.list)
	r.list = append(r.list, s)
	return nil
}

// Scenarios lists the registered scenarios in registration order.
func (r *Registry) Scenarios() []Scenario { return append([]Scenario(nil), r.list...) }

// Select returns the scenario named name, or every scenario for "all".
func (r *Registry) Select(name string) ([]Scenario, error) {
	if name == "all" {
		return r.Scenarios(), nil
	}
	i, ok := r.byName[name]
	if !ok {
		names := make([]string, len(r.list))
		for j, s := range r.list {
			names[j] = s.Name
		}
		return nil, fmt.Errorf("scenarios: no scenario %q (have %v, or all)", name, names)
	}
	return []Scenario{r.list[i]}, nil
}

// RunScenario runs s and always returns an outcome: a scenario that could
// not run fails with the invariant "error".
func RunScenario(ctx context.Context, s Scenario, o ScenarioOptions) Outcome {
	if o.Seeds == 0 {
		o.Seeds = max(1, s.DefaultSeeds)
	}
	out, err := s.Run(ctx, o)
	if err != nil {
		out = fail(s.Name, "error", "%v", err)
	}
	out.Name = s.Name
	out.Pass = out.FailedInvariant == ""
	return out
}

// Builtin returns graphfed's scenarios. Adding one is one Register call
// in the list below.
func Builtin() (*Registry, error) {
	r := NewRegistry()
	errs := []error{r.Register(dsimScenario())}
	for _, fault := range dsim.FaultKinds() {
		errs = append(errs, r.Register(focusedScenario(fault)))
	}
	errs = append(errs,
		r.Register(slowBankScenario()),
		r.Register(floodScenario()),
		r.Register(hostileAgentScenario()),
		r.Register(poisonedLedgerScenario()),
		r.Register(rewrittenLedgerScenario()),
		r.Register(pushConsumerScenario()),
		r.Register(hostileJSAPIScenario()),
		r.Register(ledgerTruncatedScenario()),
		r.Register(updateFloodScenario()),
		r.Register(durableUpdateFloodScenario()),
		r.Register(ledgerFloodScenario()),
		r.Register(ledgerJunkScenario()),
		r.Register(embeddingFloodScenario()),
	)
	for _, s := range limitScenarios() {
		errs = append(errs, r.Register(s))
	}
	errs = append(errs,
		r.Register(largeModelScenario()),
	)
	for _, s := range recoveryScenarios() {
		errs = append(errs, r.Register(s))
	}
	for _, s := range lifecycleScenarios() {
		errs = append(errs, r.Register(s))
	}
	errs = append(errs, r.Register(secondAggregatorScenario()))
	for _, s := range contractScenarios() {
		errs = append(errs, r.Register(s))
	}
	errs = append(errs, r.Register(robustScenario()))
	for _, s := range secAggScenarios() {
		errs = append(errs, r.Register(s))
	}
	return r, errors.Join(errs...)
}
