package main

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestMultiGNNFlags(t *testing.T) {
	for _, tc := range []struct {
		args                 []string
		ports, deltas, egoID bool
	}{
		{nil, false, false, false},
		{[]string{"--ports"}, true, false, false},
		{[]string{"--time-deltas", "--ego-ids"}, false, true, true},
		{[]string{"--multignn"}, true, true, true},
	} {
		var m multiGNNFlags
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		m.register(f, "", "")
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if m.ports() != tc.ports || m.timeDeltas() != tc.deltas || m.egoIDs() != tc.egoID {
			t.Errorf("%v: ports %v, time deltas %v, ego IDs %v; want %v, %v, %v", tc.args, m.ports(), m.timeDeltas(), m.egoIDs(), tc.ports, tc.deltas, tc.egoID)
		}
	}
}
