package main

import (
	"strings"
	"testing"
)

// Bad privacy settings and task/algorithm pairs fail before any data is
// loaded or any server started, with an error that names the flag.
func TestPrivacyFlagsRejectBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--scenario", "csbm", "--model-sigma", "0"}, "model σ1 is 0; it must be positive"},
		{[]string{"sim", "--scenario", "csbm", "--model-sigma", "-1"}, "model σ1 is -1"},
		{[]string{"sim", "--scenario", "csbm", "--model-sigma", "NaN"}, "model σ1 is NaN"},
		{[]string{"sim", "--scenario", "csbm", "--model-clip", "0"}, "model clip is 0"},
		{[]string{"sim", "--scenario", "csbm", "--algo", "cefedgnn", "--emb-sigma", "-1"}, "embedding σ0 is -1; it must be positive"},
		{[]string{"sim", "--scenario", "csbm", "--accountant", "moments"}, `invalid accountant "moments"`},
		{[]string{"sim", "--scenario", "csbm", "--algo", "lpsfed"}, `task node has no algorithm "lpsfed"`},
		{[]string{"sim", "--scenario", "aml", "--algo", "lpsfed-bpr"}, `task aml has no algorithm "lpsfed-bpr"`},
		{[]string{"sim", "--lightgcn", "/nonexistent", "--algo", "cefedgnn"}, `task rec has no algorithm "cefedgnn"`},
		{[]string{"agent", "--insecure", "--job", "j", "--client", "c", "--data", "/nonexistent", "--model-clip", "-3"}, "model clip is -3"},
		{[]string{"sim", "--scenario", "aml", "--emb-sigma", "0.5", "--target-epsilon", "8"}, "--emb-sigma and --target-epsilon 8 both choose σ0"},
		{[]string{"sim", "--scenario", "csbm", "--algo", "cefedgnn", "--target-epsilon", "8"}, "--target-epsilon (a node ε target) applies to AML jobs"},
		{[]string{"sim", "--scenario", "aml", "--algo", "fedavg", "--target-epsilon", "8"}, "--target-epsilon (a node ε target) applies to AML jobs"},
		{[]string{"sim", "--scenario", "aml", "--target-epsilon", "NaN"}, "--target-epsilon is NaN"},
	} {
		root := newRootCmd()
		root.SetArgs(append(tc.args, "--json"))
		_, err := executeForReport(t, root)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
