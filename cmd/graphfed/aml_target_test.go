package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"graphfed/privacy"
)

// The AML main job is private by default: with --target-epsilon 8 on a
// small world the audit of the exported ledger, recomputed from the
// ledger alone, shows node ε at p90 ≤ 8 under the exact accountant; the
// JSON privacy object states the target, the planned releases, σ0's range
// and which channels carry a DP guarantee (emb) and which do not (model at
// σ1 = 1e-3); audit.txt opens with the same statements.
func TestAMLSimTargetEpsilon(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	out := filepath.Join(t.TempDir(), "run")
	stdout, err := graphfedCmd(t, "sim", "--scenario", "aml", "--size", "tiny", "--banks", "3", "--world-rows", "4000",
		"--rounds", "3", "--local-epochs", "2", "--seed", "1", "--target-epsilon", "8", "--out", out, "--json", "--log-level", "error").Output()
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	p := lastJSON(t, stdout)["privacy"].(map[string]any)
	if p["accountant"] != "exact" || p["target_epsilon"] != 8.0 || p["emb_releases_planned"] != 3.0 {
		t.Fatalf("privacy object %v: want the exact accountant, target 8 over 3 planned releases", p)
	}
	if e := p["epsilon_p90"].(float64); !(e > 0 && e <= 8) {
		t.Fatalf("summary node ε at p90 = %v, want in (0, 8]", e)
	}
	if lo, hi := p["emb_sigma_min"].(float64), p["emb_sigma_max"].(float64); !(lo > 0 && hi >= lo) {
		t.Fatalf("σ0 range [%v, %v]", lo, hi)
	}
	ch := p["channels"].(map[string]any)
	if !strings.HasPrefix(ch["emb"].(string), "emb: DP, ε ≤ 8 per node at p90 ρ") ||
		!strings.HasPrefix(ch["model"].(string), "model: no DP guarantee at σ1 = 0.001") {
		t.Fatalf("channel statements %v", ch)
	}
	if dp, no := p["dp_channels"].([]any), p["no_dp_channels"].([]any); len(dp) != 1 || dp[0] != "emb" || len(no) == 0 || no[0] != "model" {
		t.Fatalf("dp channels %v, no-dp channels %v", dp, no)
	}
	l, err := privacy.OpenFileLedgerReadOnly(filepath.Join(out, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := l.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := privacy.Audit(entries, privacy.AuditOptions{Kind: privacy.Exact, Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	for _, pe := range rep.Percentiles {
		if pe.Q == 90 && !(pe.WorstEpsilon > 0 && pe.WorstEpsilon <= 8) {
			t.Fatalf("audit: node ε at p90 = %v, want in (0, 8]", pe.WorstEpsilon)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "audit.txt"))
	if err != nil {
		t.Fatal(err)
	}
	txt := string(b)
	if !strings.HasPrefix(txt, "privacy guarantees by channel:\n  emb: DP, ε ≤ 8") || !strings.Contains(txt, "model: no DP guarantee") {
		t.Fatalf("audit.txt does not open with the channel statements:\n%s", txt)
	}
}
