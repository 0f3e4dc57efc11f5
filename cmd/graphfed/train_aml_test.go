package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// trainCmdRoot is a root command holding `train` only.
func trainCmdRoot(args ...string) *cobra.Command {
	g := &globalFlags{logLevel: "error"}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
	root.AddCommand(newTrainCmd(g))
	root.SetArgs(args)
	return root
}

// TestTrainAML generates a world, trains the centralized AML baseline with
// Multi-GNN switches for a couple of steps, each recipe, and checks the
// report: the recipe and its steps, the metrics the sim reports, the
// split, and per-typology recall over every pattern row of the generated
// Patterns file.
func TestTrainAML(t *testing.T) {
	dir := t.TempDir()
	gen, err := runAMLCmd(t, "gen", "aml", "--banks", "4", "--size", "tiny", "--seed", "3", "--illicit-ratio", "0.01", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		recipe string
		steps  float64 // steps per epoch reported; 0: every training row once
		shift  bool
	}{
		{"stratified, the default", []string{"--steps-per-epoch", "2"}, "stratified", 2, true},
		{"stratified, old flag name", []string{"--steps", "3", "--pos-fraction", "0.25"}, "stratified", 3, true},
		{"uniform, capped epoch", []string{"--pos-fraction", "-1", "--steps-per-epoch", "2"}, "uniform-weighted", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"train", "--aml", filepath.Join(dir, "HI-Tiny_Trans.csv"), "--epochs", "2", "--hidden", "8",
				"--fanout", "2,2", "--ports", "--ego-ids", "--no-edge-updates", "--json"}, tc.args...)
			rep, err := executeForReport(t, trainCmdRoot(args...))
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Metrics
			checkTrainAMLReport(t, rep, gen)
			if m["recipe"] != tc.recipe || m["steps_per_epoch"] != tc.steps || m["train_steps"] != 2*tc.steps {
				t.Errorf("recipe %v, %v steps per epoch, %v steps; want %s, %v", m["recipe"], m["steps_per_epoch"], m["train_steps"], tc.recipe, tc.steps)
			}
			if _, ok := m["margin_shift"].(float64); ok != tc.shift {
				t.Errorf("margin shift %v", m["margin_shift"])
			}
			if share, ok := m["batch_pos_share"].(float64); tc.shift && (!ok || share <= 0 || share >= 1) {
				t.Errorf("batch share %v", m["batch_pos_share"])
			}
		})
	}
}

// checkTrainAMLReport checks what every `train --aml` report of the tiny
// world holds.
func checkTrainAMLReport(t *testing.T, rep, gen Report) {
	t.Helper()
	m := rep.Metrics
	if rep.Command != "train" || rep.Algo != "centralized-gin+rmp+ports+ego" || m["hidden"] != 8.0 || m["epochs"] != 2.0 {
		t.Fatalf("report %+v", rep)
	}
	if v, ok := m["peak_rss_mib"].(float64); !ok || v <= 0 {
		t.Errorf("peak RSS %v", m["peak_rss_mib"])
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
		if name != strings.ToLower(name) || strings.ContainsAny(name, "- ") {
			t.Errorf("typology %q: want sim's keys (fan_in, unlisted)", name)
		}
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
		{"--pos-fraction", "1"},
		{"--steps-per-epoch", "0"},
		{"--steps", "4", "--steps-per-epoch", "4"},
	} {
		err := trainCmdRoot(append([]string{"train", "--aml", "x_Trans.csv"}, args...)...).Execute()
		if err == nil || strings.Contains(err.Error(), "x_Trans.csv") {
			t.Errorf("%v: not refused before loading the file: %v", args, err)
		}
	}
}
