package scenarios

import (
	"testing"
)

// Each recovery scenario passes on real NATS; aggregator-kill9 on two
// seeds, which crash once after and once before a checkpoint write.
func TestRecoveryScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs NATS servers and clusters")
	}
	cases := []struct {
		name string
		seed uint64
	}{
		{"aggregator-kill9", 1}, {"aggregator-kill9", 2},
		{"agent-crash-rejoin", 1}, {"nats-restart", 1}, {"cluster-node-loss", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := runNamed(t, tc.name, ScenarioOptions{Seed: tc.seed})
			if !out.Pass {
				t.Fatalf("%+v", out)
			}
			t.Logf("%s seed %d: %v", tc.name, tc.seed, out.Metrics)
		})
	}
}
