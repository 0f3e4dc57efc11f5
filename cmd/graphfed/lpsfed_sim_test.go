package main

import (
	"testing"

	"graphfed/scenarios"
)

// TestSimLightGCN runs `graphfed sim --lightgcn` as a process on a small
// synthetic world and checks the JSON report of the CLI contract.
func TestSimLightGCN(t *testing.T) {
	w, err := scenarios.GenerateRecWorld(scenarios.DefaultRecWorld())
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
