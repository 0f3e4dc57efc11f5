package main

import (
	"os"
	"path/filepath"
	"testing"

	"graphfed/workload/rec"
)

// TestSimLightGCN runs `graphfed sim --lightgcn` as a process on a small
// synthetic world and checks the JSON report of the CLI contract.
func TestSimLightGCN(t *testing.T) {
	w, err := rec.GenerateWorld(rec.DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := w.WriteLightGCN(dir); err != nil {
		t.Fatal(err)
	}
	args := []string{"sim", "--lightgcn", dir, "--clients", "3", "--partition", "spectral", "--rounds", "3",
		"--local-epochs", "2", "--phi", "12", "--emb-dim", "16", "--rec-batch", "256", "--rec-lr", "5e-3",
		"--json", "--log-level", "error"}
	out, err := graphfedCmd(t, append(args, "--algo", "lpsfed")...).Output()
	if err != nil {
		t.Fatalf("sim --lightgcn: %v", err)
	}
	r := lastJSON(t, out)
	m := r["metrics"].(map[string]any)
	for _, k := range []string{"recall_at_20", "ndcg_at_20"} {
		if v, ok := m[k].(float64); !ok || v <= 0 || v > 1 {
			t.Fatalf("metrics.%s = %v", k, m[k])
		}
	}
	if pc := m["per_client"].(map[string]any); len(pc) != 3 {
		t.Fatalf("per_client has %d clients", len(pc))
	}
	if r["algo"] != "lpsfed" || r["clients"].(float64) != 3 || r["comm"].(map[string]any)["bytes"].(float64) <= 0 {
		t.Fatalf("report %v", r)
	}
	if _, ok := r["privacy"].(map[string]any)["epsilon_client_max"]; !ok {
		t.Fatalf("no privacy epsilon in %v", r["privacy"])
	}
	for _, bad := range [][]string{{"--algo", "cefedgnn"}, {"--algo", "fedavg", "--partition", "louvain"}} {
		if err := graphfedCmd(t, append(args, bad...)...).Run(); err == nil {
			t.Fatalf("sim --lightgcn %v succeeded", bad)
		}
	}
}

// TestSimGowallaSlice is a small configuration of the Gowalla benchmark of
// LPSFed: the first 2,000 users of ../shared/datasets/gowalla in 4
// spectral-clustering clients, a few rounds, FedAvg on a validation split
// and LPSFed on the test split. Random ranking of a client's ~10k items
// gives Recall@20 near 0.002; both must learn well past that.
func TestSimGowallaSlice(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "datasets", "gowalla")
	if _, err := os.Stat(filepath.Join(dir, "train.txt")); err != nil {
		t.Skipf("Gowalla not available at %s (the shared data folder is absent): %v", dir, err)
	}
	if testing.Short() {
		t.Skip("trains on a Gowalla slice")
	}
	base := []string{"sim", "--lightgcn", dir, "--max-users", "2000", "--clients", "4", "--partition", "spectral",
		"--rounds", "3", "--local-epochs", "2", "--phi", "32", "--emb-dim", "32", "--rec-batch", "2048", "--rec-lr", "5e-3",
		"--json", "--log-level", "error"}
	for _, tc := range []struct {
		name      string
		args      []string
		wantSplit string
	}{
		{"fedavg-validation", []string{"--algo", "fedavg", "--validation", "0.2"}, "validation"},
		{"lpsfed-test", []string{"--algo", "lpsfed", "--margin-gamma", "0.1"}, "test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := graphfedCmd(t, append(base, tc.args...)...).Output()
			if err != nil {
				t.Fatalf("sim: %v", err)
			}
			r := lastJSON(t, out)
			m := r["metrics"].(map[string]any)
			if m["split"] != tc.wantSplit || r["clients"].(float64) != 4 || m["clients_reporting"].(float64) != 4 {
				t.Fatalf("split %v, %v clients, %v reporting", m["split"], r["clients"], m["clients_reporting"])
			}
			if rec, ndcg := m["recall_at_20"].(float64), m["ndcg_at_20"].(float64); rec < 0.02 || ndcg < 0.01 || rec > 1 || ndcg > 1 {
				t.Fatalf("Recall@20 %.4f, NDCG@20 %.4f: nothing learned", rec, ndcg)
			}
		})
	}
}
