package main

import (
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"graphfed/graph"
	"graphfed/workload/rec"
)

// TestSimSecureDurable runs `graphfed sim --secure --durable` for each
// task on a small world: fresh keys and per-party permissions, every
// envelope signed and verified, the aggregator checkpointing to JetStream
// and the updates passing through the job's update stream. Every round
// must close at quorum with every client in, nothing may be rejected, and
// the job's ledger must hold the releases.
func TestSimSecureDurable(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	node := t.TempDir()
	cfg := graph.DefaultCSBM()
	cfg.Nodes = 600
	d, err := graph.GenerateCSBM(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.WriteTSV(node, d); err != nil {
		t.Fatal(err)
	}
	w, err := rec.GenerateWorld(rec.DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	rec := t.TempDir()
	if err := w.WriteLightGCN(rec); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		clients int
		args    []string
	}{
		{"node", 3, []string{"--dataset", node, "--algo", "cefedgnn", "--clients", "3", "--partition", "louvain",
			"--rounds", "3", "--local-epochs", "2", "--hidden", "16"}},
		{"aml", 3, []string{"--scenario", "aml", "--size", "tiny", "--banks", "3", "--world-rows", "4000",
			"--rounds", "3", "--local-epochs", "2"}},
		{"rec", 3, []string{"--lightgcn", rec, "--algo", "lpsfed", "--clients", "3", "--partition", "spectral",
			"--rounds", "3", "--freeze-rounds", "1", "--local-epochs", "1", "--phi", "12", "--emb-dim", "16",
			"--rec-batch", "256", "--round-timeout", "1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"sim", "--secure", "--durable", "--seed", "1", "--out", out, "--json", "--log-level", "error"}, tc.args...)
			stdout, err := graphfedCmd(t, args...).Output()
			if err != nil {
				t.Fatalf("sim %v: %v", args, err)
			}
			r := lastJSON(t, stdout)
			if r["rounds"].(float64) != 3 {
				t.Fatalf("%v rounds in %v", r["rounds"], r)
			}
			if rej, _ := r["metrics"].(map[string]any)["rejects"].(map[string]any); len(rej) > 0 {
				t.Fatalf("the aggregator rejected %v", rej)
			}
			if n, _ := r["privacy"].(map[string]any)["ledger_entries"].(float64); n <= 0 {
				t.Fatalf("empty ledger: %v", r["privacy"])
			}
			rows := readRounds(t, filepath.Join(out, "rounds.csv"))
			if len(rows) != 3 {
				t.Fatalf("%d round rows, want 3", len(rows))
			}
			for _, row := range rows {
				if row["reason"] != "quorum" || len(strings.Fields(row["in"])) != tc.clients {
					t.Fatalf("round %s closed by %s with %q, want every one of %d clients", row["round"], row["reason"], row["in"], tc.clients)
				}
			}
		})
	}
}

// readRounds reads a run directory's rounds.csv as one map per row.
func readRounds(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}
