package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"graphfed/jobfile"
)

// printDefaults is `graphfed run --print-defaults --algo ALGO [--run CMD]`:
// a complete job file for CMD on stdout, every key at its default.
func printDefaults(cmd *cobra.Command, args []string) error {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(cmd.ErrOrStderr())
	fs.AddFlagSet(cmd.Flags())
	fs.AddFlagSet(cmd.InheritedFlags())
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run --print-defaults: unexpected argument %q", fs.Arg(0))
	}
	run, _ := fs.GetString("run")
	algo, _ := fs.GetString("algo")
	return jobfile.WriteCommandDefaults(cmd.OutOrStdout(), jobfile.DefaultsSpec{Run: run, Algo: algo, NewRoot: newRootCmd, Groups: flagGroups()})
}

// flagGroups are the flag sets the commands register through shared
// helpers, each registered on a scratch command.
func flagGroups() []jobfile.FlagGroup {
	group := func(title string, register func(*cobra.Command)) jobfile.FlagGroup {
		c := &cobra.Command{Use: "scratch"}
		register(c)
		return jobfile.FlagGroup{Title: title, Flags: c.Flags()}
	}
	return []jobfile.FlagGroup{
		group("Rounds: adaptive deadline", func(c *cobra.Command) { registerDeadlineFlags(c, new(float64), new(time.Duration)) }),
		group("Asynchrony", func(c *cobra.Command) { (&asyncFlags{}).register(c) }),
		group("Robust aggregation", func(c *cobra.Command) { (&robustFlags{}).register(c.Flags()) }),
		group("Server optimizer", func(c *cobra.Command) { (&serverOptFlags{}).register(c.Flags()) }),
		group("Privacy", func(c *cobra.Command) { (&privacyFlags{}).register(c.Flags()) }),
		group("Durability (JetStream)", func(c *cobra.Command) { (&recoveryFlags{}).register(c) }),
		group("Large messages (object store)", func(c *cobra.Command) { (&blobFlags{}).register(c) }),
		group("AML", func(c *cobra.Command) { (&simFlags{}).registerAML(c) }),
		group("Recommendation (LPSFed)", func(c *cobra.Command) { (&simFlags{}).registerRec(c) }),
		group("FedGSP", func(c *cobra.Command) { (&fedgspFlags{}).registerServer(c) }),
		group("Process", func(c *cobra.Command) { registerMemoryLimit(c, 0, "") }),
	}
}
