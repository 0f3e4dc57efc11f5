package scenarios

import (
	"testing"

	"graphfed/privacy"
)

// Each recovery scenario passes on real NATS; aggregator-kill9 on two
// seeds, which crash once after and once before a checkpoint write, and
// the kill-and-recover scenarios of AML and LPSFed on two seeds for the
// same reason.
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
		{"aml-kill-recover", 1}, {"aml-kill-recover", 2},
		{"lpsfed-kill-recover", 1}, {"lpsfed-kill-recover", 2},
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

// releasedOnce, the kill-and-recover scenarios' ledger check, refuses a
// channel released twice in a round beyond its allowance and a node's
// embedding released twice in a round, and ignores calibrations.
func TestReleasedOnce(t *testing.T) {
	e := func(client string, ch privacy.Channel, round uint64, nodes ...int64) privacy.Entry {
		return privacy.Entry{Client: client, Channel: ch, Round: round, NodeIDs: nodes}
	}
	margin := map[privacy.Channel]int{privacy.ChannelMargin: 2}
	cases := []struct {
		name     string
		es       []privacy.Entry
		perRound map[privacy.Channel]int
		ok       bool
	}{
		{"one release per channel and round", []privacy.Entry{e("a", "model", 1), e("a", "model", 2), e("b", "model", 1), e("a", "grad", 1)}, nil, true},
		{"a model released twice in a round", []privacy.Entry{e("a", "model", 1), e("b", "model", 1), e("a", "model", 1)}, nil, false},
		{"ρ and margin on the margin channel", []privacy.Entry{e("a", "margin", 3), e("a", "margin", 3)}, margin, true},
		{"a third margin release", []privacy.Entry{e("a", "margin", 3), e("a", "margin", 3), e("a", "margin", 3)}, margin, false},
		{"calibrations are not releases", []privacy.Entry{e("a", "calibration", 1), e("a", "calibration", 1)}, nil, true},
		{"one node's embedding twice in a round", []privacy.Entry{e("a", "emb", 2, 7, 8), e("a", "emb", 2, 8)}, map[privacy.Channel]int{privacy.ChannelEmb: 2}, false},
		{"the same node in two rounds", []privacy.Entry{e("a", "emb", 1, 7), e("a", "emb", 2, 7)}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := releasedOnce(tc.es, tc.perRound); (err == nil) != tc.ok {
				t.Fatalf("releasedOnce: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
