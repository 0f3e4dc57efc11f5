package scenarios

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"graphfed/dsim"
)

// The invariants scenarios report, by name: the simulator's, which the
// real-job scenarios check too, and InvNotExercised.
const (
	InvCountedTwice     = dsim.InvCountedTwice
	InvUpdateLost       = dsim.InvUpdateLost
	InvNotAccepted      = dsim.InvNotAccepted
	InvReleaseLedger    = dsim.InvReleaseLedger
	InvBudget           = dsim.InvBudget
	InvRoundOpen        = dsim.InvRoundOpen
	InvNoProgress       = dsim.InvNoProgress
	InvNondeterministic = dsim.InvNondeterministic
	InvNotRejected      = dsim.InvNotRejected
	InvResultChanged    = dsim.InvResultChanged
	// InvNotExercised: a scenario's fault never happened across a sweep,
	// so the sweep proved nothing about it.
	InvNotExercised = "fault-not-exercised"
)

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dsimRepro is the command that reruns one seed of a simulator scenario.
func dsimRepro(name string, seed uint64) string {
	return fmt.Sprintf("graphfed scenario run %s --seed %d", name, seed)
}

// sweep runs a simulator scenario's seeds and turns the summary into an
// outcome. Every tenth seed runs twice (a single seed always does) and must
// agree bit for bit.
func sweep(ctx context.Context, name string, o ScenarioOptions, config func(uint64) (dsim.Config, error)) (Outcome, dsim.Summary, error) {
	rerun := 10
	if o.Seeds == 1 {
		rerun = 1
	}
	sum, err := dsim.RunSeeds(ctx, dsim.Seeds{First: o.Seed, Count: o.Seeds, Config: config, RerunEvery: rerun,
		Workers: o.Workers, MaxFailures: 1, TraceDir: filepath.Join(os.TempDir(), "dsim-traces")})
	if err != nil {
		return Outcome{}, sum, err
	}
	c := sum.Counters
	out := Outcome{Name: name, Seeds: sum.Seeds, Metrics: map[string]float64{
		"seeds": float64(sum.Seeds), "finished": float64(sum.Finished), "steps": float64(sum.Steps),
		"messages": float64(c.Sent), "dropped": float64(c.Dropped), "duplicated": float64(c.Duplicated),
		"reordered": float64(c.Reordered), "delayed": float64(c.Delayed), "partition_drops": float64(c.PartitionDrops),
		"agent_crashes": float64(c.AgentCrashes), "aggregator_crashes": float64(c.AggCrashes),
		"mid_step_crashes": float64(c.MidStepCrashes), "updates_counted": float64(c.Accepted),
		"stale_folded": float64(c.StaleFolded), "withheld": float64(c.Withheld), "ledger_entries": float64(c.LedgerEntries),
	}}
	for reason, n := range c.Rejected {
		out.Metrics["dropped_"+reason] = float64(n)
	}
	for reason, n := range c.Closes {
		out.Metrics["closed_"+reason] = float64(n)
	}
	for reason, n := range c.Refused {
		out.Metrics["refused_"+reason] = float64(n)
	}
	for st, n := range sum.PerStrategy {
		out.Metrics["seeds_"+st] = float64(n)
	}
	out.Metrics["embeddings_sent"] = float64(c.EmbSent)
	out.Metrics["scalars_sent"] = float64(c.ScalarsSent)
	out.Metrics["personal_models"] = float64(c.Personal)
	out.Metrics["final_reports"] = float64(c.Finals)
	out.Metrics["descriptors_sent"] = float64(c.DescSent)
	out.Metrics["descriptors_refused"] = float64(c.DescRefused)
	out.Metrics["descriptors_kept"] = float64(c.DescKept)
	out.Metrics["graph_closes"] = float64(c.GraphCloses)
	if len(sum.Failures) > 0 {
		v := sum.Failures[0]
		out.FailedInvariant, out.Detail, out.Repro = v.Invariant, v.Error(), dsimRepro(name, v.Seed)
		if v.TraceFile != "" {
			out.Detail += " (trace: " + v.TraceFile + ")"
		}
	}
	return out, sum, nil
}

func dsimScenario() Scenario {
	return Scenario{
		Name:         "dsim",
		Doc:          "deterministic simulation: every strategy (fedavg, cefedgnn, lpsfed, fedgsp), every fault mixed, every invariant after every step, many seeds",
		DefaultSeeds: 1000,
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			out, _, err := sweep(ctx, "dsim", o, func(seed uint64) (dsim.Config, error) { return dsim.RandomConfig(seed), nil })
			return out, err
		},
	}
}

// focusedScenario sweeps the simulator with one fault injected hard. Over
// a sweep of ten seeds or more the fault must have struck, or the scenario
// fails: a green run must not hide a fault that never happened.
func focusedScenario(fault string) Scenario {
	return Scenario{
		Name:         fault,
		Doc:          "deterministic simulation with one fault, " + fault + ", injected hard on a healthy network",
		DefaultSeeds: 200,
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			out, sum, err := sweep(ctx, fault, o, func(seed uint64) (dsim.Config, error) { return dsim.FocusedConfig(seed, fault) })
			if err != nil || out.FailedInvariant != "" || o.Seeds < 10 {
				return out, err
			}
			if n := faultCount(fault, sum.Counters); n == 0 {
				return fail(fault, InvNotExercised, "%d seeds and no %s happened", sum.Seeds, fault), nil
			}
			return out, nil
		},
	}
}

// faultCount is how often a fault kind struck in a sweep.
func faultCount(fault string, c dsim.Counters) int {
	switch fault {
	case "drop":
		return c.Dropped
	case "dup":
		return c.Duplicated
	case "delay":
		return c.Delayed
	case "reorder":
		return c.Reordered
	case "partition":
		return c.PartitionDrops
	case "agent-crash":
		return c.AgentCrashes
	case "aggregator-crash":
		return c.AggCrashes
	}
	return 0
}

// floodScenario: one party sends, with each of its updates, ten replays of
// it, ten updates of the wrong shape, ten for impossible rounds and ten
// under a name that never joined. Every one must be dropped for its own
// reason (checked at the step it arrives), every invariant must hold, and
// the final model must be bit-identical to the same seed's unflooded run.
func floodScenario() Scenario {
	const name = "flood"
	return Scenario{
		Name:         name,
		Doc:          "one party floods the aggregator with replays, wrong shapes, future rounds and a stranger's name",
		DefaultSeeds: 100,
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			out, sum, err := sweep(ctx, name, o, func(seed uint64) (dsim.Config, error) {
				c := dsim.HealthyConfig(seed)
				c.Flood = 10
				return c, nil
			})
			if err != nil || out.FailedInvariant != "" {
				return out, err
			}
			out.Metrics["flooded"] = float64(sum.Counters.Flooded)
			if sum.Counters.Flooded == 0 {
				return fail(name, InvNotExercised, "no flood message reached the aggregator"), nil
			}
			for seed := o.Seed; seed < o.Seed+uint64(o.Seeds); seed++ {
				if v, err := floodChangesResult(ctx, seed); err != nil || v != nil {
					if v != nil {
						out.FailedInvariant, out.Detail, out.Repro = v.Invariant, v.Error(), dsimRepro(name, seed)
					}
					return out, err
				}
			}
			return out, nil
		},
	}
}

// floodChangesResult compares one seed's final model flooded and not.
func floodChangesResult(ctx context.Context, seed uint64) (*dsim.Violation, error) {
	calm := dsim.HealthyConfig(seed)
	flooded := calm
	flooded.Flood = 10
	a, err := dsim.Run(ctx, calm)
	if err != nil {
		return nil, err
	}
	b, err := dsim.Run(ctx, flooded)
	if err != nil {
		return nil, err
	}
	same := len(a.Model) == len(b.Model) && a.Rounds == b.Rounds
	for i := 0; same && i < len(a.Model); i++ {
		same = math.Float32bits(a.Model[i]) == math.Float32bits(b.Model[i])
	}
	if same {
		return nil, nil
	}
	return &dsim.Violation{Invariant: InvResultChanged, Seed: seed, Step: b.Steps, At: b.SimTime,
		Detail: fmt.Sprintf("flooded model %v after %d rounds, unflooded %v after %d", b.Model, b.Rounds, a.Model, a.Rounds)}, nil
}
