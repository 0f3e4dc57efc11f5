package scenarios

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
)

// The update-flood scenario passes against a real secure server, with
// drops counted, and its judge fails a run that lost an honest update or
// left flood messages unaccounted for.
func TestUpdateFloodScenario(t *testing.T) {
	out := RunScenario(context.Background(), updateFloodScenario(), ScenarioOptions{Seed: 5, Log: zerolog.Nop()})
	if !out.Pass {
		t.Fatalf("%s: %s", out.FailedInvariant, out.Detail)
	}
	if out.Metrics["flood_dropped"] == 0 || out.Metrics["flood_dropped"]+out.Metrics["flood_rejected"] != floodMessages {
		t.Fatalf("metrics %v: want the flood's drops and rejects to add up to %d", out.Metrics, floodMessages)
	}
	t.Logf("metrics: %v", out.Metrics)
}

// judgeFlood fails each way the flood could have hurt the job.
func TestJudgeFlood(t *testing.T) {
	honest, flooder := floodBankIDs()
	good := func() (floodRun, floodRun) {
		mk := func(attack bool) floodRun {
			r := floodRun{agg: aggregator.Result{Model: []float32{1, 2}, Rejects: map[string]uint64{"garbage": 1},
				Flow: aggregator.FlowReport{Senders: map[string]aggregator.InboxStats{}}}, agents: make([]bus.ConnCounts, len(honest))}
			for i := range floodRounds {
				r.agg.Closes = append(r.agg.Closes, aggregator.RoundClosed{Round: uint64(i + 1), Reason: "quorum", In: honest})
			}
			if attack {
				r.sent = floodMessages
				r.agg.Rejects["garbage"] += 2
				r.agg.Flow.Senders[flooder] = aggregator.InboxStats{Received: floodMessages, Dropped: floodMessages - 2}
			}
			return r
		}
		return mk(false), mk(true)
	}
	tests := []struct {
		name  string
		spoil func(clean, flooded *floodRun)
		want  string
	}{
		{"a clean pass", func(*floodRun, *floodRun) {}, ""},
		{"a round closed without a bank", func(_, f *floodRun) { f.agg.Closes[2].In = honest[:2] }, InvUpdateLost},
		{"a round closed at the deadline", func(_, f *floodRun) { f.agg.Closes[1].Reason = "deadline" }, InvUpdateLost},
		{"another model", func(_, f *floodRun) { f.agg.Model = []float32{1, 2.0000002} }, InvResultChanged},
		{"nothing dropped", func(_, f *floodRun) {
			f.agg.Flow.Senders[flooder] = aggregator.InboxStats{Received: floodMessages}
			f.agg.Rejects["garbage"] = 1 + floodMessages
		}, InvNotExercised},
		{"a flood message unaccounted for", func(_, f *floodRun) { f.agg.Rejects["garbage"]-- }, InvFloodUncounted},
		{"an honest bank's message dropped", func(_, f *floodRun) {
			f.agg.Flow.Senders[honest[1]] = aggregator.InboxStats{Received: 9, Dropped: 1}
		}, InvUpdateLost},
		{"the aggregator cut off", func(_, f *floodRun) { f.agg.Flow.Conn.Disconnects = 1 }, InvCutOff},
		{"an agent's slow consumer", func(_, f *floodRun) { f.agents[0].SlowConsumer = 1 }, InvCutOff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, flooded := good()
			tc.spoil(&clean, &flooded)
			if got := judgeFlood("update-flood", clean, flooded); got.FailedInvariant != tc.want {
				t.Fatalf("failed %q (%s), want %q", got.FailedInvariant, got.Detail, tc.want)
			}
		})
	}
}
