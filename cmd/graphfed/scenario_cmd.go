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
	// The parties inside real-job scenarios log every round and every
	// expected rejection; they speak only when asked to (--log-level).
	req := scenarios.RunRequest{Log: zerolog.Nop()}
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
			req.Name = args[0]
			req.OnOutcome = func(out scenarios.Outcome) { scenarios.WriteOutcome(g.humanOut(), out) }
			if g.logLevel != "" { // quiet unless asked
				req.Log = g.logger()
			}
			ran, err := scenarios.RunNamed(cmd.Context(), reg, req)
			if err != nil {
				return fmt.Errorf("scenario run: %w", err)
			}
			rep := scenarioReport{Report: Report{Command: "scenario run", Seed: int64(ran.Seed), Metrics: ran.Metrics()}, Scenarios: ran.Outcomes}
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
	f.Var(unsetUint(&req.Seed), "seed", fmt.Sprintf("first seed of a sweep (default %d); alone, the only seed (reproduces a failure)", scenarios.DefaultFirstSeed))
	f.Var(unsetInt(&req.Seeds), "seeds", "seeds each simulator scenario sweeps; 0: its default (dsim 1000)")
	f.IntVar(&req.Workers, "workers", 1, "seeds simulated in parallel")
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
			return g.emitScenarios(scenarioReport{Report: Report{Command: "scenario list", Metrics: map[string]any{}}, Scenarios: listing}, start)
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
	return json.NewEncoder(os.Stdout).Encode(r)
}
