package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/aml/bank"
)

// runSplitCmd runs `graphfed <args> --json` with the gen and split
// commands and returns the JSON report printed on stdout.
func runSplitCmd(t *testing.T, args ...string) (Report, error) {
	t.Helper()
	g := &globalFlags{logLevel: "error"}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "error", "")
	root.AddCommand(newGenCmd(g), newSplitCmd(g))
	root.SetArgs(append(args, "--json"))
	return executeForReport(t, root)
}

func TestSplitAML(t *testing.T) {
	dir := t.TempDir()
	gen, err := runSplitCmd(t, "gen", "aml", "--banks", "3", "--size", "tiny", "--seed", "4", "--out", dir, "--prefix", "T")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "banks")
	rep, err := runSplitCmd(t, "split", "aml", "--trans", filepath.Join(dir, "T_Trans.csv"), "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Command != "split aml" || rep.Dataset != "T" || rep.Clients != 3 || rep.Metrics["rows"] != gen.Metrics["rows"] {
		t.Fatalf("split report %+v (gen rows %v)", rep, gen.Metrics["rows"])
	}
	rows := rep.Metrics["bank_rows"].(map[string]any)
	accts := rep.Metrics["bank_accounts"].(map[string]any)
	var total float64
	for _, id := range gen.Metrics["bank_ids"].([]any) {
		b := id.(string)
		v, err := bank.Load(filepath.Join(out, "bank-"+b))
		if err != nil {
			t.Fatal(err)
		}
		if float64(v.Graph.NumEdges()) != rows[b] || float64(len(v.Accounts)) != accts[b] || len(v.Accounts) == 0 {
			t.Fatalf("bank %s: %d rows, %d accounts; report %v, %v", b, v.Graph.NumEdges(), len(v.Accounts), rows[b], accts[b])
		}
		total += float64(len(v.Accounts))
	}
	if total != gen.Metrics["accounts"] {
		t.Fatalf("banks hold %v accounts, the world %v", total, gen.Metrics["accounts"])
	}
	if _, err := runSplitCmd(t, "split", "aml", "--trans", filepath.Join(dir, "missing_Trans.csv"), "--out", out); err == nil {
		t.Fatal("split a missing file")
	}
	if _, err := os.Stat(filepath.Join(out, "bank-"+gen.Metrics["bank_ids"].([]any)[0].(string), bank.SplitFile)); err != nil {
		t.Fatal(err)
	}
}
