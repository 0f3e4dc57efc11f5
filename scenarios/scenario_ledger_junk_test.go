package scenarios

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
)

// The ledger-junk scenario passes against a real secure server: the
// attacker's stream refuses junk at its byte limit and then at its record
// limit, and the audit and the other banks' restarts are as before.
func TestLedgerJunkScenario(t *testing.T) {
	out := RunScenario(context.Background(), ledgerJunkScenario(), ScenarioOptions{Seed: 2, Log: zerolog.Nop()})
	if !out.Pass {
		t.Fatalf("%s: %s", out.FailedInvariant, out.Detail)
	}
	if out.Metrics["junk_bytes"] > out.Metrics["stream_limit_bytes"] || out.Metrics["audit_records"] > out.Metrics["stream_limit_msgs"]*float64(ledgerBanks+1) {
		t.Fatalf("metrics %v: junk beyond the stream's limits", out.Metrics)
	}
	t.Logf("metrics: %v", out.Metrics)
}
