package job

import (
	"math"
	"testing"

	"graphfed/aggregator"
	"graphfed/cefedgnn"
	"graphfed/deploy"
)

// counts builds one client's scores from per-class [tp, fp, fn] rows,
// with its own macro-F1 as test_macro_f1 (for the contrast with the
// pooled figure).
func counts(macroF1 float64, rows ...[3]float64) map[string]float64 {
	sc := map[string]float64{"test_macro_f1": macroF1}
	for k, r := range rows {
		sc[cefedgnn.ClassCountKey("test_", k, "tp")] = r[0]
		sc[cefedgnn.ClassCountKey("test_", k, "fp")] = r[1]
		sc[cefedgnn.ClassCountKey("test_", k, "fn")] = r[2]
	}
	return sc
}

// TestPooledMacroF1 against hand-computed cases. The first is the
// structural gap: client a has labels 0,0,1 predicted 0,1,1 and client b
// labels 2,2 predicted 2,0. Per client, a scores F1 2/3 on classes 0 and
// 1 (mean 2/3) and b scores 0 on class 0 (predicted, absent) and 2/3 on
// class 2 (mean 1/3): their mean is 1/2. Pooled, class 0 has tp 1, fp 1,
// fn 1 (F1 1/2) and classes 1 and 2 F1 2/3 each: (1/2 + 2/3 + 2/3)/3 =
// 11/18.
func TestPooledMacroF1(t *testing.T) {
	a := counts(2.0/3, [3]float64{1, 0, 1}, [3]float64{1, 1, 0}, [3]float64{0, 0, 0})
	b := counts(1.0/3, [3]float64{0, 1, 0}, [3]float64{0, 0, 0}, [3]float64{1, 0, 1})
	tests := []struct {
		name  string
		final map[string]map[string]float64
		want  float64
		ok    bool
	}{
		{"classes missing on each client", map[string]map[string]float64{"a": a, "b": b}, 11.0 / 18, true},
		{"one client: its own macro-F1", map[string]map[string]float64{"a": a}, 2.0 / 3, true},
		// Class 3 is neither a label nor a prediction anywhere: it does
		// not count, as in scikit-learn's macro average.
		{"a class nobody has", map[string]map[string]float64{
			"a": counts(1, [3]float64{2, 0, 0}, [3]float64{0, 0, 0}, [3]float64{0, 0, 0}, [3]float64{0, 0, 0}),
			"b": counts(0.5, [3]float64{0, 0, 1}, [3]float64{0, 0, 0}, [3]float64{1, 1, 0}, [3]float64{0, 0, 0}),
		}, (0.8 + 2.0/3) / 2, true},
		// A class predicted somewhere but never a label has F1 0 and
		// counts.
		{"predicted, never a label", map[string]map[string]float64{
			"a": counts(0.5, [3]float64{1, 0, 1}, [3]float64{0, 1, 0}),
		}, (2.0 / 3) / 2, true},
		// A client without counts (a learner that reports none) is left
		// out of the pool; the others still pool.
		{"a client without counts", map[string]map[string]float64{"a": a, "x": {"test_macro_f1": 0.9}}, 2.0 / 3, true},
		{"no counts at all", map[string]map[string]float64{"x": {"test_macro_f1": 0.9}}, 0, false},
		{"no clients", nil, 0, false},
		{"counts all zero (no test nodes)", map[string]map[string]float64{"a": counts(0, [3]float64{}, [3]float64{})}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pooledMacroF1(tc.final, "test_")
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("pooled macro-F1 %v (ok %v), want %v (ok %v)", got, ok, tc.want, tc.ok)
			}
		})
	}
	if m, _ := meanScore(map[string]map[string]float64{"a": a, "b": b}, "test_macro_f1"); m != 0.5 {
		t.Fatalf("mean of the clients' macro-F1 %v, want 1/2", m)
	}
}

// TestPutPooledMacroF1: the key and its notes appear only when clients
// reported counts.
func TestPutPooledMacroF1(t *testing.T) {
	m := map[string]any{}
	putPooledMacroF1(m, map[string]map[string]float64{"x": {"test_macro_f1": 0.9}})
	if len(m) != 0 {
		t.Fatalf("without counts the report gained %v", m)
	}
	putPooledMacroF1(m, map[string]map[string]float64{"a": counts(1, [3]float64{3, 0, 0})})
	notes, _ := m["macro_f1_notes"].(map[string]string)
	if m["test_macro_f1_pooled"] != 1.0 || notes["test_macro_f1"] == "" || notes["test_macro_f1_pooled"] == "" {
		t.Fatalf("report %v", m)
	}
}

// TestAggregatorMetricsPooled: a deployed aggregator's node report pools
// the clients' counts too, beside the mean of their macro-F1.
func TestAggregatorMetricsPooled(t *testing.T) {
	a := counts(2.0/3, [3]float64{1, 0, 1}, [3]float64{1, 1, 0}, [3]float64{0, 0, 0})
	b := counts(1.0/3, [3]float64{0, 1, 0}, [3]float64{0, 0, 0}, [3]float64{1, 0, 1})
	m, err := aggregatorMetrics(deploy.TaskNode, aggregator.Robust{}, aggregator.Result{Final: map[string]map[string]float64{"a": a, "b": b}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := m["test_macro_f1_pooled"].(float64); !ok || math.Abs(got-11.0/18) > 1e-12 || m["test_macro_f1"] != 0.5 {
		t.Fatalf("pooled %v, mean %v: want 11/18 and 1/2", m["test_macro_f1_pooled"], m["test_macro_f1"])
	}
}
