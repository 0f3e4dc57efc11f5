package scenarios

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"graphfed/dsim"
)

func TestRegistryBuiltin(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Scenarios() {
		names = append(names, s.Name)
		if s.Doc == "" {
			t.Errorf("scenario %s has no doc line", s.Name)
		}
	}
	want := append(append([]string{"dsim"}, dsim.FaultKinds()...), "slow-bank", "flood", "hostile-agent",
		"poisoned-ledger", "rewritten-ledger-entry", "push-consumer", "hostile-js-api", "ledger-truncated", "update-flood", "durable-update-flood", "ledger-flood", "ledger-junk",
		"embedding-flood",
		"connection-flood", "subscription-flood", "bucket-fill", "large-model-by-reference",
		"aggregator-kill9", "agent-crash-rejoin", "nats-restart", "cluster-node-loss", "aml-kill-recover", "lpsfed-kill-recover",
		"sigint-aggregator", "replayed-hello", "replayed-done", "second-aggregator",
		"huge-update", "weight-hijack", "grad-hijack", "schema-hijack", "robust-aggregation",
		"secagg-dropout", "secagg-curious-aggregator", "secagg-forged-key", "secagg-late")
	if !slices.Equal(names, want) {
		t.Fatalf("builtin scenarios %v, want %v", names, want)
	}
	all, err := r.Select("all")
	if err != nil || len(all) != len(want) {
		t.Fatalf("all selected %d scenarios (%v)", len(all), err)
	}
	if _, err := r.Select("nope"); err == nil || !strings.Contains(err.Error(), "dsim") {
		t.Fatalf("unknown scenario: %v", err)
	}
}

func TestRegistryRegister(t *testing.T) {
	ok := func(context.Context, ScenarioOptions) (Outcome, error) { return Outcome{}, nil }
	tests := []struct {
		name    string
		s       Scenario
		wantErr bool
	}{
		{"a new scenario", Scenario{Name: "js-crash", Doc: "d", Run: ok}, false},
		{"a taken name", Scenario{Name: "dsim", Run: ok}, true},
		{"the reserved name all", Scenario{Name: "all", Run: ok}, true},
		{"a name that is no subject token", Scenario{Name: "JetStream crash", Run: ok}, true},
		{"no run function", Scenario{Name: "empty"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Builtin()
			if err != nil {
				t.Fatal(err)
			}
			err = r.Register(tc.s)
			if (err != nil) != tc.wantErr {
				t.Fatalf("register %q: %v", tc.s.Name, err)
			}
			if got, err := r.Select(tc.s.Name); !tc.wantErr && (err != nil || got[0].Name != tc.s.Name) {
				t.Fatalf("registered %q but select gives %v, %v", tc.s.Name, got, err)
			}
		})
	}
}

func TestRunScenarioVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		run     func(context.Context, ScenarioOptions) (Outcome, error)
		pass    bool
		failInv string
	}{
		{"pass", func(context.Context, ScenarioOptions) (Outcome, error) { return Outcome{}, nil }, true, ""},
		{"broken invariant", func(context.Context, ScenarioOptions) (Outcome, error) {
			return fail("x", InvUpdateLost, "lost"), nil
		}, false, InvUpdateLost},
		{"could not run", func(context.Context, ScenarioOptions) (Outcome, error) {
			return Outcome{}, errors.New("no server")
		}, false, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seeds int
			s := Scenario{Name: "x", DefaultSeeds: 7, Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
				seeds = o.Seeds
				return tc.run(ctx, o)
			}}
			out := RunScenario(context.Background(), s, ScenarioOptions{})
			if out.Name != "x" || out.Pass != tc.pass || out.FailedInvariant != tc.failInv || seeds != 7 {
				t.Fatalf("outcome %+v after %d seeds, want pass=%v invariant %q after 7", out, seeds, tc.pass, tc.failInv)
			}
		})
	}
}
