package job

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/privacy"
)

// TestAggregatorMetrics: the report's keys per task (scripts and tests
// read them by name) and their values.
func TestAggregatorMetrics(t *testing.T) {
	res := aggregator.Result{
		Rounds: 3,
		Closes: []aggregator.RoundClosed{{Reason: "deadline"}, {Reason: "quorum"}, {Reason: "deadline"}},
		Final: map[string]map[string]float64{
			"a": {"test_acc": 0.5, "test_macro_f1": 0.25},
			"b": {"test_acc": 0.7, "test_macro_f1": math.NaN()},
		},
		Rejects: map[string]uint64{"schema": 1}, Dropped: map[string]int{"late": 2}, Run: "r1", Stopped: "SIGINT",
		Heads:    []privacy.Head{{}},
		SetAside: map[string]int{"b": 1},
	}
	always := []string{"task", "test_acc", "test_macro_f1", "clients_reporting", "rounds_closed_at_deadline", "rejects", "rejects_by",
		"dropped", "model_sha256", "resumed", "resumed_round", "run", "flow", "secagg"}
	tests := []struct {
		name   string
		task   string
		robust aggregator.Robust
		res    aggregator.Result
		keys   []string
	}{
		{"node, stopped, with ledger heads", deploy.TaskNode, aggregator.Robust{}, res, append(slices.Clone(always), "stopped", "ledger_heads")},
		{"node under trimmed", deploy.TaskNode, aggregator.Robust{Rule: aggregator.RobustTrimmed, Trim: 1}, aggregator.Result{},
			append(slices.Clone(always), "robust", "robust_set_aside", "robust_trim")},
		{"aml: the pooled scores", deploy.TaskAML, aggregator.Robust{}, aggregator.Result{},
			append(slices.Clone(always), "test_precision_illicit", "test_recall_illicit", "test_f1_illicit")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := aggregatorMetrics(tc.task, tc.robust, tc.res)
			if err != nil {
				t.Fatal(err)
			}
			got, want := slices.Sorted(maps.Keys(m)), slices.Sorted(slices.Values(tc.keys))
			if !slices.Equal(got, want) {
				t.Fatalf("keys %v, want %v", got, want)
			}
		})
	}
	m, _ := aggregatorMetrics(deploy.TaskNode, aggregator.Robust{}, res)
	if m["test_acc"] != 0.6 || m["test_macro_f1"] != 0.25 || m["clients_reporting"] != 2 || m["rounds_closed_at_deadline"] != 2 || m["task"] != "node" {
		t.Fatalf("metrics %v", m)
	}
}

func TestRobustMetrics(t *testing.T) {
	res := aggregator.Result{SetAside: map[string]int{"x": 2}}
	if m := RobustMetrics(aggregator.Robust{}, res); m != nil {
		t.Errorf("under the mean: %v", m)
	}
	if m := RobustMetrics(aggregator.Robust{Rule: aggregator.RobustMedian}, res); len(m) != 2 || m["robust"] != aggregator.RobustMedian {
		t.Errorf("median: %v", m)
	}
	if m := RobustMetrics(aggregator.Robust{Rule: aggregator.RobustTrimmed, Trim: 3}, res); m["robust_trim"] != 3 {
		t.Errorf("trimmed: %v", m)
	}
}

func TestRoundBudgetNote(t *testing.T) {
	for _, tc := range []struct {
		rc   aggregator.RoundClosed
		want string
	}{
		{aggregator.RoundClosed{}, ""},
		{aggregator.RoundClosed{Budget: 1500 * time.Millisecond}, " budget=1.5s"},
		{aggregator.RoundClosed{Budget: 2 * time.Second, Extensions: 3}, " budget=2s (extended 3×)"},
	} {
		if got := RoundBudgetNote(tc.rc); got != tc.want {
			t.Errorf("RoundBudgetNote(%+v) = %q, want %q", tc.rc, got, tc.want)
		}
	}
}
