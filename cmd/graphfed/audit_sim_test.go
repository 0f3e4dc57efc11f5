package main

import (
	"path/filepath"
	"testing"
)

// graphfed audit recomputes, from the exported ledger alone, the ε that the
// agents reported at the end of a graphfed sim run.
func TestAuditReproducesSimEpsilon(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	out := t.TempDir()
	for _, acct := range []string{"rdp", "exact"} {
		t.Run(acct, func(t *testing.T) {
			dir := filepath.Join(out, acct)
			sim := graphfedCmd(t, "sim", "--scenario", "csbm", "--clients", "3", "--partition", "random", "--rounds", "6",
				"--model-sigma", "20", "--accountant", acct, "--out", dir, "--json", "--log-level", "warn")
			simOut, err := sim.Output()
			if err != nil {
				t.Fatalf("sim: %v", err)
			}
			simRep := lastJSON(t, simOut)
			simPriv := simRep["privacy"].(map[string]any)
			if simPriv["ledger_entries"].(float64) != 18 {
				t.Fatalf("sim ledger has %v entries, want 3 clients × 6 rounds", simPriv["ledger_entries"])
			}
			audit := graphfedCmd(t, "audit", "--ledger", filepath.Join(dir, "ledger.jsonl"), "--accountant", acct, "--json")
			audOut, err := audit.Output()
			if err != nil {
				t.Fatalf("audit: %v", err)
			}
			audPriv := lastJSON(t, audOut)["privacy"].(map[string]any)
			got, want := audPriv["epsilon_model"].(float64), simPriv["epsilon_client_max"].(float64)
			if want <= 0 || got != want {
				t.Fatalf("audit ε_model %v, agents reported %v", got, want)
			}
		})
	}
}
