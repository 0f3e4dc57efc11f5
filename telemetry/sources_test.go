package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

// The decorator is a ledger like any other.
func TestLedgerConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) privacy.Ledger { return New().Ledger("bank-1", privacy.NewMemLedger()) })
}

// failingLedger refuses every append.
type failingLedger struct{ privacy.Ledger }

func (failingLedger) Append(context.Context, privacy.Entry) error { return errors.New("disk full") }

func TestLedgerAppends(t *testing.T) {
	ctx := context.Background()
	m := New()
	es := ledgertest.Entries()
	ok := m.Ledger("bank-3", privacy.NewMemLedger())
	for _, e := range es {
		if err := ok.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	bad := m.Ledger("bank-4", failingLedger{privacy.NewMemLedger()})
	if err := bad.Append(ctx, es[0]); err == nil {
		t.Fatal("the failing ledger's error was swallowed")
	}
	want := []sample{{"graphfed_ledger_append_duration_seconds", labels("party", "bank-3"), float64(len(es))},
		{"graphfed_ledger_appends_total", labels("party", "bank-4", "channel", string(es[0].Channel), "result", "error"), 1}}
	byChannel := map[privacy.Channel]float64{}
	for _, e := range es {
		byChannel[e.Channel]++
	}
	for ch, n := range byChannel {
		want = append(want, sample{"graphfed_ledger_appends_total", labels("party", "bank-3", "channel", string(ch), "result", "ok"), n})
	}
	expect(t, m.Registry(), want)
}

// Rejects, connection events and privacy spending are read from their
// owners at every scrape: the metrics are the owners' numbers.
func TestSources(t *testing.T) {
	m := New()
	v := bus.NewValidator(bus.Schema{Job: "job"})
	v.Open(bus.Subject("job", bus.KindUpdate, "bank-1"), []byte("not an envelope"))
	v.Reject(&bus.RejectError{Reason: bus.ReasonSignature, Err: errors.New("forged")})
	v.Reject(&bus.RejectError{Reason: bus.ReasonSignature, Err: errors.New("forged")})
	m.WatchRejects("aggregator", v.Rejects)
	m.WatchConn("aggregator", func() bus.ConnCounts {
		return bus.ConnCounts{SlowConsumer: 2, Reconnects: 3, Disconnects: 4, Errors: 1}
	})

	g := spendingGate(t, privacy.Budget{Epsilon: 1e9})
	m.WatchGate("bank-1", g)
	sp := g.Spent(0)
	nodes := g.NodeEpsilons()
	expect(t, m.Registry(), []sample{
		{"graphfed_messages_rejected_total", labels("party", "aggregator", "reason", bus.ReasonGarbage), 1},
		{"graphfed_messages_rejected_total", labels("party", "aggregator", "reason", bus.ReasonSignature), 2},
		{"graphfed_nats_slow_consumer_events_total", labels("party", "aggregator"), 2},
		{"graphfed_nats_reconnects_total", labels("party", "aggregator"), 3},
		{"graphfed_nats_disconnects_total", labels("party", "aggregator"), 4},
		{"graphfed_nats_async_errors_total", labels("party", "aggregator"), 1},
		{"graphfed_privacy_delta", labels("client", "bank-1"), 1e-5},
		{"graphfed_privacy_epsilon_spent", labels("client", "bank-1", "channel", "model"), sp.Channels[privacy.ChannelModel]},
		{"graphfed_privacy_client_epsilon_spent", labels("client", "bank-1"), sp.Client},
		{"graphfed_privacy_budget_remaining_epsilon", labels("client", "bank-1"), 1e9 - sp.Client},
		{"graphfed_privacy_node_rho", labels("client", "bank-1", "rho_percentile", "90"), 0.8},
		{"graphfed_privacy_node_epsilon", labels("client", "bank-1", "rho_percentile", "90", "node", "worst"), nodes[1].WorstEpsilon},
		{"graphfed_privacy_node_epsilon", labels("client", "bank-1", "rho_percentile", "50", "node", "median"), nodes[0].MedianEpsilon},
	})
	if sp.Client <= 0 || nodes[1].WorstEpsilon <= nodes[0].WorstEpsilon {
		t.Fatalf("spending %+v, nodes %+v: want a positive ε and a larger node ε at the larger ρ", sp, nodes)
	}
	// No node budget: no remaining node budget is claimed.
	if _, ok := value(t, m.Registry(), "graphfed_privacy_node_budget_remaining_epsilon", nil); ok {
		t.Error("a node budget left is reported without a node budget")
	}
	// Later rejects show at the next scrape.
	v.Reject(&bus.RejectError{Reason: bus.ReasonSignature, Err: errors.New("forged")})
	expect(t, m.Registry(), []sample{{"graphfed_messages_rejected_total", labels("party", "aggregator", "reason", bus.ReasonSignature), 3}})
}

// spendingGate is bank-1's gate under budget after a model release, an
// embedding release of two nodes and a calibration at percentiles 50
// and 90.
func spendingGate(t *testing.T, budget privacy.Budget) *privacy.Gate {
	t.Helper()
	ctx := context.Background()
	g, err := privacy.NewGate(ctx, privacy.Config{Job: "job", Client: "bank-1", Delta: 1e-5, Budget: budget},
		privacy.NewMemLedger(), func() time.Time { return time.Unix(0, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: 1, Rows: [][]float32{{1, 2}}, Sigma: 1, Clip: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: 1, Rows: [][]float32{{1, 0}, {0, 1}}, NodeIDs: []int64{1, 2}, Sigma: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.RecordCalibration(ctx, 1, privacy.Calibration{K: 1, N: 2, Q: []float64{50, 90}, Rho: []float64{0.3, 0.8}}); err != nil {
		t.Fatal(err)
	}
	return g
}
