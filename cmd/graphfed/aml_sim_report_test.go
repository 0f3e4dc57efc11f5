package main

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
	got := typologyRecall(final)
	cyc, fan := got["cycle"].(map[string]any), got["fan_out"].(map[string]any)
	if len(got) != 2 || cyc["rows"] != 4 || cyc["recall"] != 0.5 || fan["rows"] != 2 || fan["recall"] != 0.0 {
		t.Fatalf("typologyRecall = %v", got)
	}
	var b bytes.Buffer
	if err := writeTypologyTable(&b, got); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "cycle") {
		t.Errorf("table, largest first:\n%s", b.String())
	}
	if typologyRecall(map[string]map[string]float64{"bank-1": {"test_tp": 1}}) != nil {
		t.Error("recall by typology without typology counts")
	}
}
