package scenarios

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
)

// The ledger attack scenarios pass against a real secure server.
func TestLedgerScenarios(t *testing.T) {
	for _, s := range []Scenario{poisonedLedgerScenario(), rewrittenLedgerScenario(), pushConsumerScenario()} {
		t.Run(s.Name, func(t *testing.T) {
			out := RunScenario(context.Background(), s, ScenarioOptions{Seed: 3, Log: zerolog.Nop()})
			if !out.Pass {
				t.Fatalf("%s: %s: %s", s.Name, out.FailedInvariant, out.Detail)
			}
		})
	}
}
