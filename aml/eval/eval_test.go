package eval

import (
	"bytes"
	"strings"
	"testing"
)

func TestTypologyRecallPoolsBanks(t *testing.T) {
	final := map[string]map[string]float64{
		"bank-1": {"test_typ_cycle_pos": 3, "test_typ_cycle_tp": 1, "test_typ_fan_out_pos": 2, "test_tp": 9},
		"bank-2": {"test_typ_cycle_pos": 1, "test_typ_cycle_tp": 1},
		"bank-3": {"test_tp": 4},
	}
	got := TypologyRecalls(final)
	cyc, fan := got["cycle"], got["fan_out"]
	if len(got) != 2 || cyc.Rows != 4 || cyc.Recall != 0.5 || fan.Rows != 2 || fan.Recall != 0.0 {
		t.Fatalf("TypologyRecalls = %v", got)
	}
	var b bytes.Buffer
	if err := WriteTypologyTable(&b, got); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "cycle") {
		t.Errorf("table, largest first:\n%s", b.String())
	}
	if TypologyRecalls(map[string]map[string]float64{"bank-1": {"test_tp": 1}}) != nil {
		t.Error("recall by typology without typology counts")
	}
}

func TestPooledF1(t *testing.T) {
	for _, tc := range []struct {
		name          string
		scores        map[string]map[string]float64
		f1, prec, rec float64
	}{
		{"none", nil, 0, 0, 0},
		{"no true positive", map[string]map[string]float64{"a": {"test_fp": 3, "test_fn": 2}}, 0, 0, 0},
		// tp 3, fp 1, fn 2 over two banks: 6/9, 3/4, 3/5.
		{"pooled", map[string]map[string]float64{"a": {"test_tp": 1, "test_fp": 1}, "b": {"test_tp": 2, "test_fn": 2, "val_tp": 9}},
			6.0 / 9, 0.75, 0.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f1, p, r := PooledF1(tc.scores, "test_")
			if f1 != tc.f1 || p != tc.prec || r != tc.rec {
				t.Errorf("PooledF1 = %v, %v, %v; want %v, %v, %v", f1, p, r, tc.f1, tc.prec, tc.rec)
			}
		})
	}
}
