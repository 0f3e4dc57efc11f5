package scenarios

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/inbox"
)

// The embedding-flood scenario passes against a real secure server: the
// victim's inbox stays within its bound, the flood's drops are charged to
// the bank whose key the attacker holds, and the honest result is the
// clean run's bit for bit.
func TestEmbeddingFloodScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three AML banks twice and sends 1 GB of embeddings")
	}
	out := RunScenario(context.Background(), embeddingFloodScenario(), ScenarioOptions{Seed: 1, Log: zerolog.Nop()})
	if !out.Pass {
		t.Fatalf("%s: %s", out.FailedInvariant, out.Detail)
	}
	m := out.Metrics
	if m["flood_dropped"] == 0 || m["flood_dropped"]+m["flood_kept"] != embFloodMessages || m["attacker_peak_bytes"] > m["attacker_allowance_bytes"] {
		t.Fatalf("metrics %v: want drops, drops and kept adding up to %d, the attacker within its allowance", m, embFloodMessages)
	}
	t.Logf("metrics: %v", m)
}

// judgeEmbFlood fails each way the flood could have hurt the job or gone
// unnoticed.
func TestJudgeEmbeddingFlood(t *testing.T) {
	w := &embFloodWorld{ids: []string{"bank-a", "bank-b", "bank-c"}, attacker: "bank-a", victim: "bank-b"}
	const payload = 1 << 20
	per := agent.InboxLimitsFor(payload).Neighbour.Bytes
	good := func() (embFloodRun, embFloodRun) {
		mk := func(attack bool) embFloodRun {
			r := embFloodRun{agg: aggregator.Result{Model: []float32{1, 2}}, agents: map[string]agent.Result{}, payload: payload, linked: true,
				victim: agent.InboxReport{Senders: map[string]inbox.Stats{w.attacker: {Received: 3, PeakBytes: 100}, "bank-c": {Received: 3},
					"aggregator": {Received: 7}}, PeakBytes: 200, BoundBytes: 8 * per}}
			for i := range embFloodRounds {
				r.agg.Closes = append(r.agg.Closes, aggregator.RoundClosed{Round: uint64(i + 1), Reason: "quorum", In: w.ids})
			}
			for _, id := range w.ids {
				r.agents[id] = agent.Result{Rounds: embFloodRounds, Final: map[string]float64{"f1": 0.5}}
			}
			if attack {
				r.flood = embFlood{sent: embFloodMessages, bytes: 17_000_000}
				r.victim.Senders[w.attacker] = inbox.Stats{Received: 3 + embFloodMessages, Dropped: embFloodMessages - 2, PeakBytes: per - 1}
				r.victim.PeakBytes = per
			}
			return r
		}
		return mk(false), mk(true)
	}
	tests := []struct {
		name  string
		spoil func(clean, flooded *embFloodRun)
		want  string
	}{
		{"a clean pass", func(*embFloodRun, *embFloodRun) {}, ""},
		{"a round short", func(_, f *embFloodRun) { f.agg.Closes = f.agg.Closes[1:] }, InvNoProgress},
		{"a round without the victim", func(_, f *embFloodRun) { f.agg.Closes[2].In = []string{"bank-a", "bank-c"} }, InvUpdateLost},
		{"the victim stopped training", func(_, f *embFloodRun) { f.agents["bank-b"] = agent.Result{Rounds: 1} }, InvNoProgress},
		{"the attacker's bank not linked to the victim", func(c, _ *embFloodRun) { c.linked = false }, InvNotExercised},
		{"another model", func(_, f *embFloodRun) { f.agg.Model = []float32{1, 2.0000002} }, InvResultChanged},
		{"another final score", func(_, f *embFloodRun) {
			f.agents["bank-c"] = agent.Result{Rounds: embFloodRounds, Final: map[string]float64{"f1": 0.4}}
		},
			InvResultChanged},
		{"the flood not sent", func(_, f *embFloodRun) { f.flood.sent = 10 }, InvNotExercised},
		{"flood messages not counted", func(_, f *embFloodRun) {
			st := f.victim.Senders[w.attacker]
			st.Received -= 5
			f.victim.Senders[w.attacker] = st
		}, InvFloodUncounted},
		{"nothing dropped", func(_, f *embFloodRun) {
			st := f.victim.Senders[w.attacker]
			st.Dropped = 0
			f.victim.Senders[w.attacker] = st
		}, InvNotExercised},
		{"the attacker over its allowance", func(_, f *embFloodRun) {
			st := f.victim.Senders[w.attacker]
			st.PeakBytes = per + 1
			f.victim.Senders[w.attacker] = st
		}, InvInboxUnbounded},
		{"the inbox over its bound", func(_, f *embFloodRun) { f.victim.PeakBytes = f.victim.BoundBytes + 1 }, InvInboxUnbounded},
		{"an honest neighbour's message dropped", func(_, f *embFloodRun) { f.victim.Senders["bank-c"] = inbox.Stats{Received: 3, Dropped: 1} },
			InvUpdateLost},
		{"the aggregator's message dropped", func(_, f *embFloodRun) { f.victim.Senders["aggregator"] = inbox.Stats{Received: 7, Dropped: 1} },
			InvUpdateLost},
		{"the victim cut off", func(_, f *embFloodRun) { f.victimConn.SlowConsumer = 1 }, InvCutOff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, flooded := good()
			tc.spoil(&clean, &flooded)
			if got := judgeEmbFlood("embedding-flood", w, clean, flooded); got.FailedInvariant != tc.want {
				t.Fatalf("failed %q (%s), want %q", got.FailedInvariant, got.Detail, tc.want)
			}
		})
	}
}
