package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/aggregator"
)

// The flags give the rule's defaults for what is not given, and what is
// given in their place, a zero included (μ = 0 is FedAvg, not "default").
func TestServerOptFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want aggregator.ServerOpt
	}{
		{nil, aggregator.ServerOpt{}},
		{[]string{"--server-opt", "fedadam"}, aggregator.DefaultServerOpt(aggregator.ServerOptFedAdam)},
		{[]string{"--server-opt", "fedavgm", "--server-momentum", "0"}, aggregator.ServerOpt{Rule: "fedavgm", LR: 1}},
		{[]string{"--server-opt", "fedyogi", "--server-lr", "0.01", "--server-tau", "1e-3"},
			aggregator.ServerOpt{Rule: "fedyogi", LR: 0.01, Beta1: 0.9, Beta2: 0.99, Tau: 1e-3}},
		{[]string{"--server-lr", "0.5"}, aggregator.ServerOpt{LR: 0.5}}, // refused by the configuration
	} {
		var o serverOptFlags
		c := &cobra.Command{Use: "scratch"}
		o.register(c.Flags())
		if err := c.Flags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := o.opt(); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// A server optimizer the job cannot take fails the run with the
// configuration's reason.
func TestServerOptFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--scenario", "csbm", "--server-lr", "0.5"}, "without a rule"},
		{[]string{"sim", "--scenario", "csbm", "--server-opt", "sgd"}, `unknown rule "sgd"`},
		{[]string{"sim", "--scenario", "csbm", "--server-opt", "fedadam", "--server-beta2", "NaN"}, "beta2 NaN must be finite"},
		{[]string{"sim", "--scenario", "csbm", "--algo", "local", "--server-opt", "fedavgm"}, "for the averaging algorithms"},
	} {
		root := newRootCmd()
		root.SetArgs(append(tc.args, "--json", "--rounds", "1"))
		_, err := executeForReport(t, root)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
