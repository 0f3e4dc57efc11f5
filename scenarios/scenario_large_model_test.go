package scenarios

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// The large-model-by-reference scenario passes against a real secure
// server with a 64 KiB payload limit: models by reference, the final
// model bit-identical to the inline run's, the bad digest counted.
func TestLargeModelScenario(t *testing.T) {
	out := RunScenario(context.Background(), largeModelScenario(), ScenarioOptions{Seed: 3, Log: zerolog.Nop()})
	if !out.Pass {
		t.Fatalf("%s: %s", out.FailedInvariant, out.Detail)
	}
	if out.Metrics["blob_digest_rejects"] != 1 || out.Metrics["payload_limit_bytes"] != largeMaxPayload {
		t.Fatalf("metrics %v", out.Metrics)
	}
	t.Logf("metrics: %v", out.Metrics)
}

// judgeLarge fails each way carriage by reference could go wrong.
func TestJudgeLarge(t *testing.T) {
	good := func() (largeRun, largeRun) {
		mk := func(byRef bool) largeRun {
			r := largeRun{agg: aggregator.Result{Model: []float32{1, 2}, Rejects: map[string]uint64{}},
				payload: 1 << 20, modelBytes: 160_004}
			for i := range largeRounds {
				r.agg.Closes = append(r.agg.Closes, aggregator.RoundClosed{Round: uint64(i + 1), Reason: "quorum", In: []string{deploy.ClientID(2), deploy.ClientID(0), deploy.ClientID(1)}})
			}
			if byRef {
				r.payload, r.injected = largeMaxPayload, true
				r.agg.Rejects[bus.ReasonBlobDigest] = 1
				r.aggBlobs = bus.BlobStats{Puts: largeRounds, Fetches: largeBanks * largeRounds}
				for range largeBanks {
					r.bankBlobs = append(r.bankBlobs, bus.BlobStats{Puts: largeRounds, Fetches: largeRounds})
				}
			}
			return r
		}
		return mk(false), mk(true)
	}
	tests := []struct {
		name  string
		spoil func(inline, byRef *largeRun)
		want  string
	}{
		{"a clean pass", func(*largeRun, *largeRun) {}, ""},
		{"a round short", func(_, r *largeRun) { r.agg.Closes = r.agg.Closes[:2] }, InvNoProgress},
		{"a bank missing", func(_, r *largeRun) { r.agg.Closes[1].In = []string{deploy.ClientID(0)} }, InvUpdateLost},
		{"another model", func(_, r *largeRun) { r.agg.Model = []float32{1, 2.0000002} }, InvResultChanged},
		{"models went inline", func(_, r *largeRun) { r.aggBlobs.Puts = 0 }, InvNotExercised},
		{"a bank sent inline", func(_, r *largeRun) { r.bankBlobs[1].Puts = 0 }, InvNotExercised},
		{"the limit held the models", func(_, r *largeRun) { r.payload = 1 << 20 }, InvNotExercised},
		{"the inline run used blobs", func(i, _ *largeRun) { i.aggBlobs.Fetches = 1 }, InvNotExercised},
		{"no bad reference sent", func(_, r *largeRun) { r.injected = false }, InvNotExercised},
		{"the bad reference accepted", func(_, r *largeRun) { delete(r.agg.Rejects, bus.ReasonBlobDigest) }, InvBadRefAccepted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inline, byRef := good()
			tc.spoil(&inline, &byRef)
			if got := judgeLarge("large-model-by-reference", inline, byRef); got.FailedInvariant != tc.want {
				t.Fatalf("failed %q (%s), want %q", got.FailedInvariant, got.Detail, tc.want)
			}
		})
	}
}
