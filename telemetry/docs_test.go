package telemetry

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/inbox"
	"graphfed/privacy"
)

// exported is every graphfed_ metric family a process can export: each
// recorder and source exercised once.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	m := New()
	m.Aggregator().Stepped(aggregator.UpdateIn{Round: 1}, 1, []aggregator.Action{aggregator.OpenRound{Round: 1},
		aggregator.RoundClosed{Round: 1, Reason: "quorum"}, aggregator.Dropped{Reason: "late"}})
	m.Agent("bank-1").Stepped(nil, []agent.MachineAction{agent.PublishUpdate{}, agent.PublishEmbeddings{},
		agent.BudgetSpent{Channel: privacy.ChannelModel, Err: errors.New("spent")}}, time.Second)
	m.WatchTraffic("bank-1", func(string) map[bus.Kind]bus.Traffic {
		return map[bus.Kind]bus.Traffic{bus.KindUpdate: {Messages: 1, Bytes: 1}}
	})
	if err := m.Ledger("bank-1", privacy.NewMemLedger()).Append(context.Background(), privacy.Entry{}); err == nil {
		t.Fatal("an invalid entry was appended")
	}
	m.LedgerRetried("bank-1", privacy.ChannelModel)
	v := bus.NewValidator(bus.Schema{Job: "j"})
	v.Reject(errors.New("garbage"))
	m.WatchRejects("bank-1", v.Rejects)
	m.WatchConn("bank-1", func() bus.ConnCounts { return bus.ConnCounts{} })
	m.WatchInbox("bank-1", func() map[string]inbox.Stats { return map[string]inbox.Stats{"bank-0": {Received: 3, Dropped: 1}} })
	m.WatchGate("bank-1", spendingGate(t, privacy.Budget{Epsilon: 1e9, NodeEpsilon: 1e9, NodeRho: 0.5}))
	if err := m.WatchServer(&fakeServer{events: map[bus.ServerEventKey]int64{{Kind: bus.ServerEventLimit, Reason: "max_payload"}: 1},
		suppressed: map[string]int64{bus.ServerEventLimit: 0}}); err != nil {
		t.Fatal(err)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), Namespace+"_") {
			out[mf.GetName()] = true
		}
	}
	return out
}

var metricName = regexp.MustCompile(`graphfed_[a-z0-9_]+`)

// docs/METRICS.md documents exactly the metrics the code exports, and
// the Grafana dashboard uses no other.
func TestMetricsDocumented(t *testing.T) {
	names := exported(t)
	doc, err := os.ReadFile("../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	for n := range names {
		if !strings.Contains(string(doc), "| `"+n+"` |") {
			t.Errorf("%s has no row in docs/METRICS.md", n)
		}
	}
	for _, row := range regexp.MustCompile("(?m)^\\| `(graphfed_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		if !names[row[1]] {
			t.Errorf("docs/METRICS.md documents %s, which nothing exports", row[1])
		}
	}
	dash, err := os.ReadFile("../examples/grafana-graphfed.json")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, n := range metricName.FindAllString(string(dash), -1) {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		used[base] = true
		if !names[base] {
			t.Errorf("the dashboard queries %s, which nothing exports", n)
		}
	}
	if len(used) < 10 {
		t.Errorf("the dashboard uses %d metrics", len(used))
	}
}
