package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"graphfed/jobfile"
)

// newRunCmd is `graphfed run JOB.yaml [flags]`: the command a job file
// names (sim, aggregator or agent) with the file's keys as its flags.
// Flags are parsed by that command, not by run (run cannot know them
// before it reads the file), so every flag of sim, aggregator and agent,
// present or added later, is both a key and an override without a list
// of them here.
func newRunCmd(_ *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run JOB.yaml [flags] | run --print-defaults --algo ALGO [--run sim|aggregator|agent]",
		Short: "Run a simulation, an aggregator or an agent from a YAML job file whose keys are the command's flags",
		Long: `Run the command a YAML job file names with the file's settings:

  run: sim            # or aggregator, agent
  scenario: aml       # every other key is a flag of that command, same name and values
  seed: 1
  fanout: [5, 5]      # list flags take YAML lists

Flags given after the file override its keys: graphfed run job.yaml --seed 2.
Paths in the file are relative to the working directory, as on the command line.
graphfed run JOB.yaml --help lists the keys (the flags of the command the file runs).
graphfed run --print-defaults --algo ALGO writes a complete commented file. See docs/JOBS.md.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			for _, a := range args {
				if a == "--print-defaults" || strings.HasPrefix(a, "--print-defaults=") {
					return printDefaults(cmd, args)
				}
			}
			if strings.HasPrefix(args[0], "-") {
				return fmt.Errorf("run: the job file comes first: graphfed run JOB.yaml [flags] (got %s)", args[0])
			}
			return jobfile.RunFile(cmd.Context(), newRootCmd, args[0], args[1:], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	// Parsed by printDefaults only; listed here for --help.
	f := cmd.Flags()
	f.Bool("print-defaults", false, "write a complete job file with every key commented out at its default, and exit")
	f.String("algo", "", "with --print-defaults: the algorithm the file runs")
	f.String("run", "sim", "with --print-defaults: the command the file runs: "+strings.Join(jobfile.Commands(), ", "))
	return cmd
}
