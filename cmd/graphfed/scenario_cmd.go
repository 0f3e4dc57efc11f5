package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/scenarios"
)

// scenarioReport is the CLI contract's report (report.go) plus the verdict
// of every scenario run.
type scenarioReport struct {
	Report
	Scenarios []scenarios.Outcome `json:"scenarios"`
}

// newScenarioCmd is `graphfed scenario`: the named fault-injection scenarios.
func newScenarioCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "scenario", Short: "Fault-injection scenarios: the deterministic simulator and real jobs under attack"}
	cmd.AddCommand(newScenarioRunCmd(g), newScenarioListCmd(g))
	return cmd
}

func newScenarioRunCmd(g *globalFlags) *cobra.Command {
	var (
		seed           uint64
		seeds, workers int
	)
	cmd := &cobra.Command{
		Use:   "run NAME|all [--seed N] [--seeds K] [--workers W]",
		Short: "Run one scenario or all of them; each reports pass or fail and the invariant that failed",
		Example: "  graphfed scenario run all --json\n" +
			"  graphfed scenario run dsim --seeds 100000 --workers 2 --json   # seeds/s in metrics\n" +
			"  graphfed scenario run drop --seed 17                           # reproduce one seed",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			reg, err := scenarios.Builtin()
			if err != nil {
				return fmt.Errorf("scenario run: %w", err)
			}
			// The parties inside real-job scenarios log every round and every
			// expected rejection; they speak only when asked to.
			req := scenarios.RunRequest{Name: args[0], Workers: workers, Log: zerolog.Nop(),
				OnOutcome: func(out scenarios.Outcome) { scenarios.WriteOutcome(g.humanOut(), out) }}
			fl := cmd.Flags()
			if fl.Changed("seed") {
				req.Seed = &seed
			}
			if fl.Changed("seeds") {
				req.Seeds = &seeds
			}
			if fl.Changed("log-level") {
				req.Log = g.logger()
			}
			ran, err := scenarios.RunNamed(cmd.Context(), reg, req)
			if err != nil {
				return fmt.Errorf("scenario run: %w", err)
			}
			rep := scenarioReport{Report: Report{Command: "scenario run", Seed: int64(seed), Metrics: ran.Metrics()}, Scenarios: ran.Outcomes}
			if err := g.emitScenarios(rep, start); err != nil {
				return err
			}
			if ran.Failed > 0 {
				return fmt.Errorf("scenario run: %d of %d scenarios failed", ran.Failed, len(ran.Outcomes))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", scenarios.DefaultFirstSeed, "first seed of a sweep; alone, the only seed (reproduces a failure)")
	f.IntVar(&seeds, "seeds", 0, "seeds each simulator scenario sweeps; 0: its default (dsim 1000)")
	f.IntVar(&workers, "workers", 1, "seeds simulated in parallel")
	return cmd
}

func newScenarioListCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the scenarios",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			start := time.Now()
			reg, err := scenarios.Builtin()
			if err != nil {
				return fmt.Errorf("scenario list: %w", err)
			}
			listing := reg.Listing()
			if err := scenarios.WriteListing(g.humanOut(), listing); err != nil {
				return fmt.Errorf("scenario list: %w", err)
			}
			return g.emitScenarios(scenarioReport{Report: Report{Command: "scenario list"}, Scenarios: listing}, start)
		},
	}
}

// emitScenarios is emit (report.go) for a report carrying scenarios: under
// --json the object is the last line on stdout.
func (g *globalFlags) emitScenarios(r scenarioReport, start time.Time) error {
	if !g.json {
		return nil
	}
	r.Seconds = time.Since(start).Seconds()
	if r.Metrics == nil {
		r.Metrics = map[string]any{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = fmt.Fprintln(os.Stdout, string(b))
	return err
}
