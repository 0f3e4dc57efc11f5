package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/aml/amllearner"
	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/deploy"
	"graphfed/gnn"
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

// TestTrainAMLConfig checks the configuration the flags build: by default
// the federated banks' learner (deploy.DefaultAMLConfig) and recipe, the
// uniform weighted recipe with every row an epoch when asked for.
func TestTrainAMLConfig(t *testing.T) {
	bank := deploy.DefaultAMLConfig()
	for _, tc := range []struct {
		name  string
		args  []string
		frac  float64
		steps int
	}{
		{"defaults", nil, amllearner.DefaultPosFraction, amlTrainStepsPerEpoch},
		{"zero share is the default", []string{"--pos-fraction", "0"}, edgegnn.DefaultPosFraction, amlTrainStepsPerEpoch},
		{"another share", []string{"--pos-fraction", "0.2", "--steps-per-epoch", "100"}, 0.2, 100},
		{"uniform", []string{"--pos-fraction", "-1"}, 0, 0},
		{"uniform, capped", []string{"--pos-fraction", "-1", "--steps-per-epoch", "50"}, 0, 50},
		{"uniform, old flag", []string{"--pos-fraction", "-0.5", "--steps", "7"}, 0, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a amlTrainFlags
			cmd := &cobra.Command{Use: "train"}
			node := gnn.DefaultTrainConfig()
			cmd.Flags().IntVar(&node.Hidden, "hidden", node.Hidden, "")
			cmd.Flags().IntVar(&node.Epochs, "epochs", node.Epochs, "")
			cmd.Flags().Float64Var(&node.LR, "lr", node.LR, "")
			a.register(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := a.config(cmd, node)
			if err != nil {
				t.Fatal(err)
			}
			if c.PosFraction != tc.frac || c.StepsPerEpoch != tc.steps {
				t.Errorf("pos fraction %v, %d steps per epoch; want %v, %d", c.PosFraction, c.StepsPerEpoch, tc.frac, tc.steps)
			}
			if c.Model.Kind != bank.Kind || c.Model.Hidden != bank.Hidden || c.LR != bank.LR || c.BatchSize != bank.BatchSize ||
				!slices.Equal(c.FanOut, bank.FanOut) || c.Epochs != amlTrainEpochs {
				t.Errorf("%s h%d lr %v batch %d fan-out %v, %d epochs; the banks' learner: %+v", c.Model.Kind, c.Model.Hidden, c.LR, c.BatchSize, c.FanOut, c.Epochs, bank)
			}
		})
	}
}

// TestAMLMatchTypologies matches pattern rows to transactions by accounts,
// time and amount, and tallies recall per typology.
func TestAMLMatchTypologies(t *testing.T) {
	w := amlworld.NewGraph("m")
	rows := []amlworld.TxRow{
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 5, Laundering: true},
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 6},
		{Time: 120, FromBank: "2", FromAccount: "B", ToBank: "1", ToAccount: "C", AmountPaid: 5, Laundering: true},
		{Time: 180, FromBank: "1", FromAccount: "C", ToBank: "1", ToAccount: "A", AmountPaid: 1, Laundering: true},
	}
	for i := range rows {
		w.AddRow(&rows[i])
	}
	attempts := []amlworld.Attempt{
		{Type: amlworld.Cycle, Rows: []amlworld.TxRow{rows[0], rows[2]}},
		{Type: amlworld.FanOut, Rows: []amlworld.TxRow{{Time: 60, FromBank: "9", FromAccount: "Z", ToBank: "1", ToAccount: "A", AmountPaid: 5}}},
	}
	typ, matched := amlworld.MatchTypologies(w, attempts)
	if want := []int8{int8(amlworld.Cycle), -1, int8(amlworld.Cycle), -1}; matched != 2 || !slices.Equal(typ, want) {
		t.Fatalf("typologies %v, matched %d", typ, matched)
	}
	rec := amlTypologyRecall(w, typ, []int32{0, 1, 2, 3}, []float32{1, 5, -1, 0.5}, 0.8)
	cyc := rec["cycle"].(map[string]any) // sim's key for CYCLE
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
