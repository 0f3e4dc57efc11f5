// Command graphfed is the command-line front of graphfed: flag parsing and
// wiring only. Every command takes --json; then the last line on stdout is one
// JSON object (see report.go) and human output goes to stderr.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signalContext()
	defer stop()
	root, g := newRoot()
	err := root.ExecuteContext(ctx)
	// A command that fails or is interrupted skips PersistentPostRunE; its
	// profiles are what one wants most then (a run stopped by SIGINT
	// because it was slow), so they are written on the way out too.
	_ = g.prof.stop()
	if err != nil {
		os.Exit(1)
	}
}

// globalFlags are the flags every command shares.
type globalFlags struct {
	json     bool
	logLevel string
	prof     profileFlags
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
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print one JSON result object as the last line of stdout; human output goes to stderr")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	g.prof.register(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.prof.start() }
	root.PersistentPostRunE = func(*cobra.Command, []string) error { return g.prof.stop() }
	for _, c := range subcommands(g) {
		root.AddCommand(c)
	}
	return root, g
}

// subcommands lists every command; each lives in its own file.
func subcommands(g *globalFlags) []*cobra.Command {
	return []*cobra.Command{
		newTrainCmd(g),
		newSimCmd(g),
		newAggregatorCmd(g),
		newAgentCmd(g),
		newPartitionCmd(g),
		newServerCmd(g),
		newPrivacyCmd(g),
		newAuditCmd(g),
		newReportCmd(g),
		newGenCmd(g),
		newSplitCmd(g),
		newDataCmd(g),
		newSpectralCmd(g),
		newKeysCmd(g),
		newScenarioCmd(g),
		newRunCmd(g),
	}
}

// signalContext ends on the first SIGINT or SIGTERM with the signal as its
// cause (aggregator.StopReason tells the agents which); a second signal
// kills the process the default way.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			name := "SIGINT"
			if s == syscall.SIGTERM {
				name = "SIGTERM"
			}
			cancel(fmt.Errorf("received %s", name))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}
