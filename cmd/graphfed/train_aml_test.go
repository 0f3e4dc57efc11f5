package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/graph"
	"graphfed/workload/aml"
)

// TestTrainAML generates a world, trains the centralized AML baseline with
// Multi-GNN switches for a couple of steps, and checks the report: the
// metrics the sim reports, the split, and per-typology recall over every
// pattern row of the generated Patterns file.
func TestTrainAML(t *testing.T) {
	dir := t.TempDir()
	gen, err := runAMLCmd(t, "gen", "aml", "--banks", "4", "--size", "tiny", "--seed", "3", "--illicit-ratio", "0.01", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	g := &globalFlags{logLevel: "error"}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
	root.AddCommand(newTrainCmd(g))
	root.SetArgs([]string{"train", "--aml", filepath.Join(dir, "HI-Tiny_Trans.csv"), "--epochs", "1", "--steps", "2", "--hidden", "8",
		"--fanout", "2,2", "--ports", "--ego-ids", "--no-edge-updates", "--json"})
	rep, err := executeForReport(t, root)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	if rep.Command != "train" || rep.Algo != "centralized-gin+rmp+ports+ego" || m["hidden"] != 8.0 || m["epochs"] != 1.0 {
		t.Fatalf("report %+v", rep)
	}
	for _, k := range []string{"test_f1_illicit", "val_f1_illicit", "test_f1_illicit_tuned", "val_f1_illicit_tuned"} {
		if v, ok := m[k].(float64); !ok || v < 0 || v > 1 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
	rows := 0.0
	for _, r := range m["split_rows"].([]any) {
		rows += r.(float64)
	}
	if rows != m["rows"] || rows != gen.Metrics["rows"] {
		t.Errorf("split rows sum to %v of %v (generated %v)", rows, m["rows"], gen.Metrics["rows"])
	}
	if m["pattern_rows_matched"] != gen.Metrics["pattern_rows"] {
		t.Errorf("matched %v pattern rows of %v", m["pattern_rows_matched"], gen.Metrics["pattern_rows"])
	}
	typ, ok := m["test_recall_by_typology"].(map[string]any)
	if !ok || len(typ) == 0 {
		t.Fatalf("typology recall %v", m["test_recall_by_typology"])
	}
	for name, v := range typ {
		r := v.(map[string]any)
		if r["rows"].(float64) < 1 || r["recall"].(float64) < 0 || r["recall"].(float64) > 1 {
			t.Errorf("%s: %v", name, r)
		}
	}
}

func TestTrainAMLFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--kind", "pna"},
		{"--fanout", "5"},
		{"--scenario", "csbm"},
	} {
		g := &globalFlags{logLevel: "error"}
		root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
		root.PersistentFlags().BoolVar(&g.json, "json", false, "")
		root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
		root.AddCommand(newTrainCmd(g))
		root.SetArgs(append([]string{"train", "--aml", "x_Trans.csv"}, args...))
		if err := root.Execute(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// TestAMLMatchTypologies matches pattern rows to transactions by accounts,
// time and amount, and tallies recall per typology.
func TestAMLMatchTypologies(t *testing.T) {
	w := graph.NewAMLGraph("m")
	rows := []graph.TxRow{
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 5, Laundering: true},
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 6},
		{Time: 120, FromBank: "2", FromAccount: "B", ToBank: "1", ToAccount: "C", AmountPaid: 5, Laundering: true},
		{Time: 180, FromBank: "1", FromAccount: "C", ToBank: "1", ToAccount: "A", AmountPaid: 1, Laundering: true},
	}
	for i := range rows {
		w.AddRow(&rows[i])
	}
	attempts := []graph.AMLAttempt{
		{Type: graph.AMLCycle, Rows: []graph.TxRow{rows[0], rows[2]}},
		{Type: graph.AMLFanOut, Rows: []graph.TxRow{{Time: 60, FromBank: "9", FromAccount: "Z", ToBank: "1", ToAccount: "A", AmountPaid: 5}}},
	}
	typ, matched := aml.MatchTypologies(w, attempts)
	if want := []int8{int8(graph.AMLCycle), -1, int8(graph.AMLCycle), -1}; matched != 2 || !slices.Equal(typ, want) {
		t.Fatalf("typologies %v, matched %d", typ, matched)
	}
	rec := amlTypologyRecall(w, typ, []int32{0, 1, 2, 3}, []float32{1, 5, -1, 0.5}, 0.8)
	cyc := rec[graph.AMLCycle.String()].(map[string]any)
	if cyc["rows"] != 2 || cyc["recall"] != 0.5 || cyc["recall_tuned"] != 0.5 {
		t.Errorf("cycle %v", cyc)
	}
	un := rec["unlisted"].(map[string]any)
	if un["rows"] != 1 || un["recall"] != 1.0 || un["recall_tuned"] != 0.0 {
		t.Errorf("unlisted %v", un)
	}
	if len(rec) != 2 {
		t.Errorf("recall %v", rec)
	}
}
