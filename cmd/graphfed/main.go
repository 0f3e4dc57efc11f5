// Command graphfed is the command-line front of graphfed: flag parsing and
// wiring only. Every command takes --json; then the last line on stdout is one
// JSON object (see report.go) and human output goes to stderr.
package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"graphfed/internal/profile"
	"graphfed/internal/shutdown"
)

func main() {
	ctx, stop := shutdown.OnSignal(context.Background())
	defer stop()
	root, g := newRoot()
	err := root.ExecuteContext(ctx)
	// A command that fails or is interrupted skips PersistentPostRunE; its
	// profiles are what one wants most then (a run stopped by SIGINT
	// because it was slow), so they are written on the way out too.
	_ = g.prof.Stop()
	if err != nil {
		os.Exit(1)
	}
}

// globalFlags are the flags every command shares.
type globalFlags struct {
	json     bool
	logLevel string
	prof     profile.Profiler
}

func newRootCmd() *cobra.Command {
	root, _ := newRoot()
	return root
}

// newRoot is newRootCmd with the global flags it parses into.
func newRoot() (*cobra.Command, *globalFlags) {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "graphfed",
		Short:         "Federated graph learning over NATS with a metric-DP privacy gate",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	f := root.PersistentFlags()
	f.BoolVar(&g.json, "json", false, "print one JSON result object as the last line of stdout; human output goes to stderr")
	f.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error (default info; scenario run: none unless given)")
	f.StringVar(&g.prof.CPU, "cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof)")
	f.StringVar(&g.prof.Heap, "memprofile", "", "write a heap profile to this file when the command ends (go tool pprof; in-use and allocated)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.prof.Start() }
	root.PersistentPostRunE = func(*cobra.Command, []string) error { return g.prof.Stop() }
	// Each command lives in its own file.
	root.AddCommand(newTrainCmd(g), newSimCmd(g), newAggregatorCmd(g), newAgentCmd(g),
		newPartitionCmd(g), newServerCmd(g), newPrivacyCmd(g), newAuditCmd(g),
		newReportCmd(g), newGenCmd(g), newSplitCmd(g), newDataCmd(g),
		newSpectralCmd(g), newKeysCmd(g), newScenarioCmd(g), newRunCmd(g))
	return root, g
}
