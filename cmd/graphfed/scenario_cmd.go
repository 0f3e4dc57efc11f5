package main

import (
	"encoding/json"
	"fmt"
	"io"
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
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Fault-injection scenarios: the deterministic simulator and real jobs under attack",
	}
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
			selected, err := reg.Select(args[0])
			if err != nil {
				return fmt.Errorf("scenario run: %w", err)
			}
			// --seed alone reruns exactly that seed: what a failure's
			// reproduction line asks for.
			if cmd.Flags().Changed("seed") && !cmd.Flags().Changed("seeds") {
				seeds = 1
			}
			if seeds < 0 || workers < 1 {
				return fmt.Errorf("scenario run: --seeds %d and --workers %d", seeds, workers)
			}
			// The parties inside real-job scenarios log every round and every
			// expected rejection; they speak only when asked to.
			log := zerolog.Nop()
			if cmd.Flags().Changed("log-level") {
				log = g.logger()
			}
			o := scenarios.ScenarioOptions{Seed: seed, Seeds: seeds, Workers: workers, Log: log}
			rep := scenarioReport{Report: Report{Command: "scenario run", Seed: int64(seed)}}
			failed := 0
			for _, s := range selected {
				t := time.Now()
				out := scenarios.RunScenario(cmd.Context(), s, o)
				out.Seconds = time.Since(t).Seconds()
				if out.Seeds > 0 && out.Seconds > 0 {
					if out.Metrics == nil {
						out.Metrics = map[string]float64{}
					}
					out.Metrics["seeds_per_second"] = float64(out.Seeds) / out.Seconds
				}
				printOutcome(g.humanOut(), out)
				if !out.Pass {
					failed++
				}
				rep.Scenarios = append(rep.Scenarios, out)
			}
			rep.Metrics = map[string]any{"scenarios": len(rep.Scenarios), "passed": len(rep.Scenarios) - failed, "failed": failed}
			if err := g.emitScenarios(rep, start); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("scenario run: %d of %d scenarios failed", failed, len(rep.Scenarios))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 1, "first seed of a sweep; alone, the only seed (reproduces a failure)")
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
			rep := scenarioReport{Report: Report{Command: "scenario list"}, Scenarios: []scenarios.Outcome{}}
			for _, s := range reg.Scenarios() {
				seeds := "runs once"
				if s.DefaultSeeds > 0 {
					seeds = fmt.Sprintf("%d seeds", s.DefaultSeeds)
				}
				fmt.Fprintf(g.humanOut(), "%-17s %-10s %s\n", s.Name, seeds, s.Doc)
				rep.Scenarios = append(rep.Scenarios, scenarios.Outcome{Name: s.Name, Seeds: s.DefaultSeeds, Detail: s.Doc})
			}
			return g.emitScenarios(rep, start)
		},
	}
}

// printOutcome writes one human line per scenario, and the reproduction
// command under a failure.
func printOutcome(w io.Writer, out scenarios.Outcome) {
	verdict, seeds := "PASS", ""
	if !out.Pass {
		verdict = "FAIL"
	}
	if out.Seeds > 0 {
		seeds = fmt.Sprintf(", %d seeds, %.0f seeds/s", out.Seeds, out.Metrics["seeds_per_second"])
	}
	fmt.Fprintf(w, "%s %s (%.2fs%s)\n", verdict, out.Name, out.Seconds, seeds)
	if !out.Pass {
		fmt.Fprintf(w, "    %s: %s\n", out.FailedInvariant, out.Detail)
		if out.Repro != "" {
			fmt.Fprintf(w, "    reproduce: %s\n", out.Repro)
		}
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
