package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

func TestAggregatorRecorder(t *testing.T) {
	m := New()
	r := m.Aggregator()
	now := time.Now()
	steps := []struct {
		ev    aggregator.Event
		round uint64
		acts  []aggregator.Action
	}{
		{aggregator.Tick{Now: now}, 0, []aggregator.Action{aggregator.OpenRound{Round: 1}}},
		{aggregator.UpdateIn{Client: "a", Round: 1}, 1, nil},
		{aggregator.UpdateIn{Client: "b", Round: 1}, 1, []aggregator.Action{
			aggregator.RoundClosed{Round: 1, Reason: "quorum", In: []string{"a", "b"}, Late: []string{"c"}, Live: 3, Duration: 2 * time.Second},
			aggregator.OpenRound{Round: 2}}},
		// c's update for round 1 arrives in round 2: staleness 1, dropped late.
		{aggregator.UpdateIn{Client: "c", Round: 1}, 2, []aggregator.Action{aggregator.Dropped{Client: "c", Round: 1, Reason: "late"}}},
		// One for a round not yet open: no staleness, dropped as future.
		{aggregator.UpdateIn{Client: "c", Round: 9}, 2, []aggregator.Action{aggregator.Dropped{Client: "c", Round: 9, Reason: "future"}}},
		{aggregator.Tick{Now: now}, 2, []aggregator.Action{
			aggregator.RoundClosed{Round: 2, Reason: "deadline", In: []string{"a"}, Stale: []string{"b"}, Live: 2, Duration: 30 * time.Second}}},
	}
	for _, s := range steps {
		r.Stepped(s.ev, s.round, s.acts)
	}
	expect(t, m.Registry(), []sample{
		{"graphfed_rounds_closed_total", labels("reason", "quorum"), 1},
		{"graphfed_rounds_closed_total", labels("reason", "deadline"), 1},
		{"graphfed_round_duration_seconds", nil, 2},
		{"graphfed_round", nil, 2},
		{"graphfed_clients_live", nil, 2},
		{"graphfed_updates_accepted_total", nil, 3},
		{"graphfed_updates_stale_total", nil, 1},
		{"graphfed_round_late_clients_total", nil, 1},
		{"graphfed_updates_dropped_total", labels("reason", "late"), 1},
		{"graphfed_updates_dropped_total", labels("reason", "future"), 1},
		{"graphfed_update_staleness_rounds", nil, 3}, // a, b on time and c one round late
	})
	mfs, _ := m.Registry().Gather()
	for _, mf := range mfs {
		if mf.GetName() == "graphfed_update_staleness_rounds" {
			if s := mf.GetMetric()[0].GetHistogram().GetSampleSum(); s != 1 {
				t.Errorf("staleness sum %v, want 1", s)
			}
		}
		if mf.GetName() == "graphfed_round_duration_seconds" {
			if s := mf.GetMetric()[0].GetHistogram().GetSampleSum(); s != 32 {
				t.Errorf("round duration sum %v, want 32", s)
			}
		}
	}
}

// An agent's process registers none of the aggregator's metrics.
func TestAgentProcessHasNoAggregatorMetrics(t *testing.T) {
	m := New()
	m.Agent("bank-1").Stepped(agent.Start{}, []agent.MachineAction{agent.PublishUpdate{}}, time.Second)
	if _, ok := value(t, m.Registry(), "graphfed_round", nil); ok {
		t.Fatal("graphfed_round exported by a process without an aggregator")
	}
}

func TestAgentRecorder(t *testing.T) {
	m := New()
	a, b := m.Agent("bank-1"), m.Agent("bank-2")
	a.Stepped(agent.RoundOpened{Round: 1}, []agent.MachineAction{
		agent.PublishEmbeddings{To: "bank-2"}, agent.PublishEmbeddings{To: "bank-3"}, agent.PublishUpdate{}}, 3*time.Second)
	a.Stepped(agent.RoundOpened{Round: 2}, []agent.MachineAction{
		agent.BudgetSpent{Round: 2, Channel: privacy.ChannelModel, Err: errors.New("spent")},
		agent.PublishUpdate{Update: bus.Update{Withheld: true}}}, time.Second)
	b.Stepped(agent.ModelIn{}, []agent.MachineAction{agent.Note{Msg: "stale model"}}, time.Millisecond)
	expect(t, m.Registry(), []sample{
		{"graphfed_agent_updates_sent_total", labels("party", "bank-1", "withheld", "false"), 1},
		{"graphfed_agent_updates_sent_total", labels("party", "bank-1", "withheld", "true"), 1},
		{"graphfed_agent_embeddings_sent_total", labels("party", "bank-1"), 2},
		{"graphfed_privacy_budget_exhausted_total", labels("client", "bank-1", "channel", "model"), 1},
		{"graphfed_agent_train_duration_seconds", labels("party", "bank-1"), 2},
	})
	// A step that trained nothing is not a training time.
	if _, ok := value(t, m.Registry(), "graphfed_agent_train_duration_seconds", labels("party", "bank-2")); ok {
		t.Error("bank-2 trained nothing but has a training time")
	}
}

func TestTraffic(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerOptions{NoJetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	dial := func(name string) *bus.NATSTransport {
		nc, err := bus.Connect(srv.ClientURL(), bus.ConnectOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		tr := bus.NewNATSTransport(nc, true)
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	tr, peer := dial("aggregator"), dial("bank-1")
	m := New()
	m.WatchTraffic("aggregator", tr.TrafficOf)
	got := make(chan struct{}, 2)
	sub, err := tr.Subscribe(func(bus.Msg) { got <- struct{}{} }, bus.Subject("job", bus.KindUpdate, "bank-1"), "gf.job.bogus.x")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx := context.Background()
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		tr      *bus.NATSTransport
		subject string
		n       int
	}{
		{tr, bus.Subject("job", bus.KindModel, "all"), 100},
		{tr, bus.Subject("job", bus.KindModel, "bank-1"), 50},
		{peer, bus.Subject("job", bus.KindUpdate, "bank-1"), 70},
		{peer, "gf.job.bogus.x", 5}, // a peer's invented kind: no new label value
	} {
		if err := p.tr.Publish(ctx, p.subject, make([]byte, p.n)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("the peer's messages did not arrive")
		}
	}
	expect(t, m.Registry(), []sample{
		{"graphfed_transport_messages_total", labels("party", "aggregator", "channel", "model", "direction", "sent"), 2},
		{"graphfed_transport_bytes_total", labels("party", "aggregator", "channel", "model", "direction", "sent"), 150},
		{"graphfed_transport_bytes_total", labels("party", "aggregator", "channel", "update", "direction", "received"), 70},
		{"graphfed_transport_bytes_total", labels("party", "aggregator", "channel", "other", "direction", "received"), 5},
	})
}
