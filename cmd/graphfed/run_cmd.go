package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
			return runJobFile(cmd, args[0], args[1:])
		},
	}
	// Parsed by printDefaults only; listed here for --help.
	f := cmd.Flags()
	f.Bool("print-defaults", false, "write a complete job file with every key commented out at its default, and exit")
	f.String("algo", "", "with --print-defaults: the algorithm the file runs")
	f.String("run", "sim", "with --print-defaults: the command the file runs: "+strings.Join(jobfile.Commands(), ", "))
	return cmd
}

// runJobFile checks the whole file against the command it names, then
// runs that command on a fresh root with the command-line flags; the
// file's keys are set after the command line is parsed, on the flags it
// left alone.
func runJobFile(cmd *cobra.Command, path string, flags []string) error {
	job, err := jobfile.Load(path)
	if err != nil {
		return err
	}
	if err := checkJob(job); err != nil {
		return err
	}
	root := jobRoot(job, flags)
	root.SetOut(cmd.OutOrStdout())
	root.SetErr(cmd.ErrOrStderr())
	return root.ExecuteContext(cmd.Context())
}

// jobRoot is a fresh root that runs job's command with the command-line
// flags and then the file's keys for the flags those left alone.
func jobRoot(job *jobfile.Job, flags []string) *cobra.Command {
	root := newRootCmd()
	root.SilenceErrors = true // the outer root prints the error once
	pre := root.PersistentPreRunE
	// Root's persistent pre-run comes after the flags are parsed and
	// before the command's own pre-run (privacy resolution), its
	// required-flag check and its run.
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := job.Apply(c.Flags(), func(f *pflag.Flag) bool { return f.Changed }); err != nil {
			return err
		}
		return pre(c, args)
	}
	root.SetArgs(append([]string{job.Run}, flags...))
	return root
}

// checkJob applies job to the flags of a fresh copy of its command: the
// first unknown key or bad value, before anything starts.
func checkJob(job *jobfile.Job) error {
	fs, err := commandFlags(job.Run)
	if err != nil {
		return err
	}
	return job.Check(fs)
}

// commandFlags are the flags of a fresh `graphfed NAME`, the global ones
// included, in the order they were registered.
func commandFlags(name string) (*pflag.FlagSet, error) {
	c, err := findCommand(newRootCmd(), name)
	if err != nil {
		return nil, err
	}
	c.InheritedFlags() // merges the root's persistent flags into c.Flags()
	fs := c.Flags()
	fs.SortFlags = false
	return fs, nil
}

func findCommand(root *cobra.Command, name string) (*cobra.Command, error) {
	c, _, err := root.Find([]string{name})
	if err != nil || c == root {
		return nil, fmt.Errorf("run: no command %q", name)
	}
	return c, nil
}
