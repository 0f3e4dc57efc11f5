package scenarios

import "testing"

// The lifecycle scenarios on a secure embedded server: a stopped run's
// report and agents, and replays of its hellos and done in the resumed run.
func TestScenarioLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	for _, tc := range []struct{ name, metric string }{
		{"sigint-aggregator", "rounds_before_stop"},
		{"replayed-hello", "rejected_replay"},
		{"replayed-done", "dones_replayed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runNamed(t, tc.name, ScenarioOptions{Seed: 1})
			if !out.Pass || out.Metrics[tc.metric] == 0 {
				t.Fatalf("%+v", out)
			}
		})
	}
}
