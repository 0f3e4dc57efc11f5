package scenarios

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
)

// DefaultFirstSeed is the first seed of a sweep that names none.
const DefaultFirstSeed = 1

// RunRequest is one `graphfed scenario run NAME|all`: which scenarios,
// from which seed, how many seeds. Nil fields are unset.
type RunRequest struct {
	Name string // a registered scenario, or "all"
	// Seed is the first seed of each sweep; nil: DefaultFirstSeed.
	Seed *uint64
	// Seeds is how many seeds each seeded scenario sweeps; nil: the
	// scenario's DefaultSeeds, or exactly 1 when Seed is given (a seed
	// alone reruns that seed: what a failure's reproduction line asks
	// for). 0: the scenario's DefaultSeeds.
	Seeds   *int
	Workers int // seeds simulated in parallel; 0: 1
	Log     zerolog.Logger
	// OnOutcome, if set, hears each scenario's verdict as it lands.
	OnOutcome func(Outcome)
}

// RunReport is what a RunRequest ran: every scenario's outcome, in
// registration order.
type RunReport struct {
	Seed     uint64 // the first seed of each sweep
	Outcomes []Outcome
	Failed   int
}

// Metrics are the report's counts as the CLI contract carries them.
func (r RunReport) Metrics() map[string]any {
	return map[string]any{"scenarios": len(r.Outcomes), "passed": len(r.Outcomes) - r.Failed, "failed": r.Failed}
}

// RunNamed runs the scenarios of reg that req names, one after the other,
// timing each: a sweep's outcome carries its seeds per second. An error
// means nothing ran (an unknown name, a negative count); a failing
// scenario is a failing Outcome.
func RunNamed(ctx context.Context, reg *Registry, req RunRequest) (RunReport, error) {
	selected, err := reg.Select(req.Name)
	if err != nil {
		return RunReport{}, err
	}
	o := ScenarioOptions{Seed: DefaultFirstSeed, Workers: max(req.Workers, 1), Log: req.Log}
	if req.Seed != nil {
		o.Seed, o.Seeds = *req.Seed, 1
	}
	if req.Seeds != nil {
		o.Seeds = *req.Seeds
	}
	if o.Seeds < 0 || req.Workers < 0 {
		return RunReport{}, fmt.Errorf("--seeds %d and --workers %d", o.Seeds, req.Workers)
	}
	rep := RunReport{Seed: o.Seed}
	for _, s := range selected {
		start := time.Now()
		out := RunScenario(ctx, s, o)
		out.Seconds = time.Since(start).Seconds()
		if out.Seeds > 0 && out.Seconds > 0 {
			if out.Metrics == nil {
				out.Metrics = map[string]float64{}
			}
			out.Metrics["seeds_per_second"] = float64(out.Seeds) / out.Seconds
		}
		if req.OnOutcome != nil {
			req.OnOutcome(out)
		}
		if !out.Pass {
			rep.Failed++
		}
		rep.Outcomes = append(rep.Outcomes, out)
	}
	return rep, nil
}

// Listing is every scenario of reg as an outcome that has not run: its
// name, its default seeds and its doc line as the detail.
func (r *Registry) Listing() []Outcome {
	out := []Outcome{}
	for _, s := range r.list {
		out = append(out, Outcome{Name: s.Name, Seeds: s.DefaultSeeds, Detail: s.Doc})
	}
	return out
}

// WriteListing writes one human line per listed scenario.
func WriteListing(w io.Writer, listing []Outcome) error {
	for _, s := range listing {
		seeds := "runs once"
		if s.Seeds > 0 {
			seeds = fmt.Sprintf("%d seeds", s.Seeds)
		}
		if _, err := fmt.Fprintf(w, "%-17s %-10s %s\n", s.Name, seeds, s.Detail); err != nil {
			return err
		}
	}
	return nil
}

// WriteOutcome writes one human line for a scenario run, and under a
// failure the broken invariant and the command that reproduces it.
func WriteOutcome(w io.Writer, out Outcome) error {
	verdict, seeds := "PASS", ""
	if !out.Pass {
		verdict = "FAIL"
	}
	if out.Seeds > 0 {
		seeds = fmt.Sprintf(", %d seeds, %.0f seeds/s", out.Seeds, out.Metrics["seeds_per_second"])
	}
	if _, err := fmt.Fprintf(w, "%s %s (%.2fs%s)\n", verdict, out.Name, out.Seconds, seeds); err != nil || out.Pass {
		return err
	}
	if _, err := fmt.Fprintf(w, "    %s: %s\n", out.FailedInvariant, out.Detail); err != nil || out.Repro == "" {
		return err
	}
	_, err := fmt.Fprintf(w, "    reproduce: %s\n", out.Repro)
	return err
}
