package eval

import (
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
)

func TestPooledOperatingPoint(t *testing.T) {
	grid := edgegnn.DecisionGrid()
	// Two banks whose validation positives sit at margins 1 and 3 and
	// negatives at 0.5 and 2: alone, bank a would pick a threshold below 1
	// and bank b one below 3; pooled, the threshold between 2 and 3
	// separates everything but bank a's positive.
	banks := map[string]struct{ vm, tm []float32 }{
		"a": {vm: []float32{1, 0.5, 0.5}, tm: []float32{3, 0.5}},
		"b": {vm: []float32{3, 3, 2, 2, 2}, tm: []float32{1, 2}},
	}
	labels := map[string]struct{ vl, tl []int32 }{
		"a": {vl: []int32{1, 0, 0}, tl: []int32{1, 0}},
		"b": {vl: []int32{1, 1, 0, 0, 0}, tl: []int32{1, 0}},
	}
	final := map[string]map[string]float64{}
	for id, b := range banks {
		out := map[string]float64{}
		if err := PutGridCounts(out, "val", grid, b.vm, labels[id].vl); err != nil {
			t.Fatal(err)
		}
		if err := PutGridCounts(out, "test", grid, b.tm, labels[id].tl); err != nil {
			t.Fatal(err)
		}
		final[id] = out
	}
	op, ok, err := PooledOperatingPoint(final)
	if err != nil || !ok {
		t.Fatalf("pooled operating point: ok %v, %v", ok, err)
	}
	// Pooled validation: positives {1,3,3}, negatives {.5,.5,2,2,2}.
	// Thresholds in [2, 3): TP 2, FP 0, FN 1, F1 0.8; in [1, 2): TP 2,
	// FP 3, F1 0.5; in [.5, 1): TP 3, FP 3, F1 .667; below .5: F1 .545.
	// The grid point of [2, 3) nearest the arg-max is 2.
	if op.Threshold != 2 || op.ValF1 != 0.8 {
		t.Errorf("threshold %v val F1 %v, want 2 and 0.8", op.Threshold, op.ValF1)
	}
	// Test at 2: bank a's 3 is a TP, bank b's 1 a FN, no FP.
	if op.TestF1 != 2.0/3 || op.TestPrecision != 1 || op.TestRecall != 0.5 {
		t.Errorf("test F1 %v precision %v recall %v, want 2/3, 1, 1/2", op.TestF1, op.TestPrecision, op.TestRecall)
	}
	if _, ok, err := PooledOperatingPoint(map[string]map[string]float64{"a": {"test_tp": 1}}); ok || err != nil {
		t.Errorf("scores without grid counts: ok %v, %v", ok, err)
	}
}

func TestWithoutGridCounts(t *testing.T) {
	in := map[string]float64{"val_g0_tp": 1, "test_g64_fn": 2, "test_tp": 3, "val_f1_illicit": 0.5, "test_g_x": 4, "val_gx1_tp": 5}
	got, n := WithoutGridCounts(in)
	if n != 2 || len(got) != 4 {
		t.Fatalf("left out %d, kept %v; want 2 left out and test_tp, val_f1_illicit, test_g_x, val_gx1_tp kept", n, got)
	}
	for _, k := range []string{"test_tp", "val_f1_illicit", "test_g_x", "val_gx1_tp"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s dropped", k)
		}
	}
}

func TestTypologyKey(t *testing.T) {
	for _, tc := range []struct {
		t    int8
		want string
	}{{-1, "unlisted"}, {int8(amlworld.FanOut), "fan_out"}, {int8(amlworld.GatherScatter), "gather_scatter"}, {int8(amlworld.Stack), "stack"}} {
		if got := TypologyKey(tc.t); got != tc.want {
			t.Errorf("TypologyKey(%d) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
