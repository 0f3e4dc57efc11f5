package scenarios

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// The ledger-flood scenario passes against a real secure server: the
// flooder's stream stops at its limit and the audit charges all of it to
// the flooder.
func TestLedgerFloodScenario(t *testing.T) {
	out := RunScenario(context.Background(), ledgerFloodScenario(), ScenarioOptions{Seed: 3, Log: zerolog.Nop()})
	if !out.Pass {
		t.Fatalf("%s: %s", out.FailedInvariant, out.Detail)
	}
	if out.Metrics["flood_stored"] != out.Metrics["stream_limit_msgs"] {
		t.Fatalf("metrics %v: want the flooder's stream at its limit", out.Metrics)
	}
	t.Logf("metrics: %v", out.Metrics)
}

// judgeLedgerFlood fails each way the flood could have hurt the job or
// gone uncounted.
func TestJudgeLedgerFlood(t *testing.T) {
	honest, flooder := floodBankIDs()
	limit := bus.LedgerPartyLimits(flooder, floodBanks+1)
	good := func() (ledgerFloodRun, ledgerFloodRun) {
		mk := func(attack bool) ledgerFloodRun {
			r := ledgerFloodRun{limit: limit}
			r.agg.Model = []float32{1, 2, 3}
			for i := range floodRounds {
				r.agg.Closes = append(r.agg.Closes, aggregator.RoundClosed{Round: uint64(i + 1), Reason: "quorum", In: honest})
			}
			for _, id := range honest {
				r.audit.Entries = append(r.audit.Entries, privacy.Entry{Client: id, Seq: 1}, privacy.Entry{Client: id, Seq: 2})
			}
			if attack {
				r.flood = ledgerFlood{sent: ledgerFloodMessages, refused: errors.New("maximum messages exceeded")}
				for range limit.Msgs {
					r.audit.Rejected = append(r.audit.Rejected, privacy.Rejection{Client: flooder})
				}
			}
			return r
		}
		return mk(false), mk(true)
	}
	for _, tc := range []struct {
		name  string
		spoil func(clean, flooded *ledgerFloodRun)
		inv   string
	}{
		{"good", func(_, _ *ledgerFloodRun) {}, ""},
		{"model changed", func(_, f *ledgerFloodRun) { f.agg.Model = []float32{1, 2, 4} }, InvResultChanged},
		{"a round lost", func(_, f *ledgerFloodRun) { f.agg.Closes = f.agg.Closes[:1] }, InvNoProgress},
		{"flood not sent", func(_, f *ledgerFloodRun) { f.flood.sent = 10 }, InvNotExercised},
		{"stream never refused", func(_, f *ledgerFloodRun) { f.flood.refused = nil }, InvFloodUncounted},
		{"an honest entry lost", func(_, f *ledgerFloodRun) { f.audit.Entries = f.audit.Entries[1:] }, InvUpdateLost},
		{"junk in the clean run", func(c, _ *ledgerFloodRun) { c.audit.Rejected = []privacy.Rejection{{Client: honest[0]}} }, InvTamperUnseen},
		{"past the limit", func(_, f *ledgerFloodRun) {
			f.audit.Rejected = append(f.audit.Rejected, privacy.Rejection{Client: flooder})
		}, InvFloodUncounted},
		{"junk charged to an honest bank", func(_, f *ledgerFloodRun) {
			f.audit.Rejected[0].Client = honest[1]
		}, InvFloodUncounted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clean, flooded := good()
			tc.spoil(&clean, &flooded)
			out := judgeLedgerFlood("ledger-flood", clean, flooded)
			if out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}
