package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runAMLCmd runs `graphfed <args> --json` with the gen and data commands
// and returns the JSON report printed on stdout.
func runAMLCmd(t *testing.T, args ...string) (Report, error) {
	t.Helper()
	g := &globalFlags{logLevel: "error"}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
	root.AddCommand(newGenCmd(g), newDataCmd(g))
	root.SetArgs(append(args, "--json"))
	return executeForReport(t, root)
}

func TestGenAndStatsAML(t *testing.T) {
	dir := t.TempDir()
	gen, err := runAMLCmd(t, "gen", "aml", "--banks", "5", "--size", "tiny", "--ratio", "li", "--seed", "9", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Command != "gen aml" || gen.Dataset != "LI-Tiny" || gen.Clients != 5 || gen.Seed != 9 {
		t.Fatalf("gen report %+v", gen)
	}
	trans := filepath.Join(dir, "LI-Tiny_Trans.csv")
	st, err := runAMLCmd(t, "data", "stats", "--aml", trans)
	if err != nil {
		t.Fatal(err)
	}
	m := st.Metrics
	for _, k := range []string{"rows", "accounts", "banks", "laundering_rows", "laundering_rate",
		"rows_per_typology", "cross_bank_share", "bank_edge_ratio"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	if m["rows"] != gen.Metrics["rows"] || m["laundering_rows"] != gen.Metrics["laundering_rows"] || m["banks"] != 5.0 {
		t.Fatalf("stats %v vs gen %v", m, gen.Metrics)
	}
	if m["bank_edge_ratio"].(float64) <= 1 || m["cross_bank_share"].(float64) <= 0 {
		t.Fatalf("bank edge ratio %v, cross-bank share %v", m["bank_edge_ratio"], m["cross_bank_share"])
	}
	gt, _ := json.Marshal(gen.Metrics["rows_per_typology"])
	stt, _ := json.Marshal(m["rows_per_typology"])
	if !bytes.Equal(gt, stt) {
		t.Fatalf("rows per typology: gen %s, stats %s", gt, stt)
	}
}

func TestDataStatsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "Bad_Trans.csv")
	content := "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,Payment Currency,Payment Format,Is Laundering\n" +
		"2022/09/01 00:20,010,8000EBD30,10,8000EBD30,1.00,US Dollar,1.00,US Dollar,ACH,0\n" +
		"2022/09/01 00:21,010,8000EBD30,10,8000EBD30,1.00,Dollar,1.00,US Dollar,ACH,0\n"
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // error substring; empty means success
	}{
		{"no source", []string{"data", "stats"}, "exactly one"},
		{"two sources", []string{"data", "stats", "--aml", bad, "--dataset", dir}, "exactly one"},
		{"lightgcn without train.txt", []string{"data", "stats", "--lightgcn", dir}, "train.txt"},
		{"strict", []string{"data", "stats", "--aml", bad}, "Bad_Trans.csv:3:"},
		{"lenient", []string{"data", "stats", "--aml", bad, "--lenient"}, ""},
		{"missing file", []string{"data", "stats", "--aml", filepath.Join(dir, "none_Trans.csv")}, "no such file"},
		{"bad size", []string{"gen", "aml", "--size", "huge", "--out", dir}, "unknown size"},
		{"one bank", []string{"gen", "aml", "--banks", "1", "--out", dir}, "banks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := runAMLCmd(t, c.args...)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if rep.Metrics["skipped_rows"] != 1.0 || rep.Metrics["rows"] != 1.0 {
					t.Fatalf("metrics %v", rep.Metrics)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestDataStatsLightGCN(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"train.txt": "0 0 1 2\n1 1\n2 2 3\n", "test.txt": "0 3\n1 2 0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := runAMLCmd(t, "data", "stats", "--lightgcn", dir)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	want := map[string]float64{"users": 3, "items": 4, "nodes": 7, "train_interactions": 6, "test_interactions": 3,
		"train_users": 3, "test_users": 2, "test_users_without_train": 0, "test_interactions_cold_item": 0, "density": 0.5}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if deg := m["item_degree"].(map[string]any); deg["max"] != 2.0 || deg["mean"] != 1.5 {
		t.Errorf("item degree %v, want max 2, mean 1.5", deg)
	}
}
