package telemetry

import (
	"math"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"graphfed/bus"
	"graphfed/inbox"
	"graphfed/privacy"
)

// sources is the collector of the figures that already exist as counters
// elsewhere and are read when Prometheus scrapes: the validators' rejects,
// the connections' events and traffic, the inboxes' drops and the privacy
// gates' spending. Reading them rather than counting again keeps the
// metrics equal to the JSON report.
type sources struct {
	mu      sync.Mutex
	rejects map[string]func() map[string]uint64
	conns   map[string]func() bus.ConnCounts
	traffic map[string]func(direction string) map[bus.Kind]bus.Traffic
	inboxes map[string]func() map[string]inbox.Stats
	gates   map[string]*privacy.Gate

	rejected, reconnects, disconnects, slow, asyncErrs *prometheus.Desc
	trafficMsgs, trafficBytes                          *prometheus.Desc
	inboxReceived, inboxDropped, inboxDroppedBytes     *prometheus.Desc
	epsilon, clientEps, delta, budgetLeft, nodeLeft    *prometheus.Desc
	nodeEps, nodeRho                                   *prometheus.Desc
}

func newSources() *sources {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &sources{
		rejects: map[string]func() map[string]uint64{},
		conns:   map[string]func() bus.ConnCounts{},
		traffic: map[string]func(string) map[bus.Kind]bus.Traffic{},
		inboxes: map[string]func() map[string]inbox.Stats{},
		gates:   map[string]*privacy.Gate{},
		rejected: desc("messages_rejected_total", "Messages the party's validator rejected, by reason (bus.Reason*: garbage, signature, subject, unknown_sender, shape, non_finite, round, oversized, replay, blob_*).",
			LabelParty, LabelReason),
		trafficMsgs:  desc("transport_messages_total", "Messages on the party's NATS connection, by channel (message kind) and direction.", LabelParty, LabelChannel, LabelDirection),
		trafficBytes: desc("transport_bytes_total", "Bytes of those messages as they crossed the wire (signed envelopes).", LabelParty, LabelChannel, LabelDirection),
		reconnects:   desc("nats_reconnects_total", "Times the party's NATS connection reconnected.", LabelParty),
		disconnects:  desc("nats_disconnects_total", "Times the party's NATS connection was cut (slow consumer, authorization, stale connection, server gone).", LabelParty),
		slow:         desc("nats_slow_consumer_events_total", "Slow-consumer episodes: a subscription fell behind and the client library dropped messages (nats.ErrSlowConsumer).", LabelParty),
		asyncErrs:    desc("nats_async_errors_total", "Other asynchronous NATS errors (permission violations above all).", LabelParty),
		epsilon:      desc("privacy_epsilon_spent", "ε spent by the client on one privacy channel (model, grad, margin, descriptor), at δ of graphfed_privacy_delta.", LabelClient, LabelChannel),
		clientEps:    desc("privacy_client_epsilon_spent", "ε of the client's model, grad, margin and descriptor releases composed: what its budget caps.", LabelClient),
		delta:        desc("privacy_delta", "δ at which the client's ε figures are stated.", LabelClient),
		budgetLeft:   desc("privacy_budget_remaining_epsilon", "The client's budget ε less its composed ε spent (only with a budget set).", LabelClient),
		nodeLeft:     desc("privacy_node_budget_remaining_epsilon", "The node budget ε less the worst node's ε at the budget's distance ρ (only with a node budget set).", LabelClient),
		nodeEps: desc("privacy_node_epsilon", "Per-node ε of embedding releases at the calibrated distance ρ_q (rho_percentile q), of the worst and of the median node, as the audit computes it.",
			LabelClient, LabelPercent, LabelNode),
		nodeRho: desc("privacy_node_rho", "The calibrated metric-DP distance ρ_q at percentile q of the client's latest calibration.", LabelClient, LabelPercent),
		inboxReceived: desc("inbox_received_total", "Messages that reached the party's bounded inbox (package inbox), by the sender it charges them to.",
			LabelParty, LabelSender),
		inboxDropped: desc("inbox_dropped_total", "Messages the party's inbox dropped because their sender's queue was full, by sender.",
			LabelParty, LabelSender),
		inboxDroppedBytes: desc("inbox_dropped_bytes_total", "Bytes of those messages.",
			LabelParty, LabelSender),
	}
}

// WatchRejects reports party's reject counters (bus.Validator.Rejects) at
// every scrape.
func (m *Metrics) WatchRejects(party string, rejects func() map[string]uint64) {
	m.sources.mu.Lock()
	m.sources.rejects[party] = rejects
	m.sources.mu.Unlock()
}

// WatchConn reports party's connection events (bus.ConnEvents.Counts) at
// every scrape.
func (m *Metrics) WatchConn(party string, counts func() bus.ConnCounts) {
	m.sources.mu.Lock()
	m.sources.conns[party] = counts
	m.sources.mu.Unlock()
}

// WatchTraffic reports party's messages and bytes by channel and
// direction (bus.NATSTransport.TrafficOf, the counts its report's bytes per
// channel come from) at every scrape.
func (m *Metrics) WatchTraffic(party string, traffic func(direction string) map[bus.Kind]bus.Traffic) {
	m.sources.mu.Lock()
	m.sources.traffic[party] = traffic
	m.sources.mu.Unlock()
}

// WatchInbox reports party's inbox counters by sender (the aggregator's
// Server.InboxStats, an agent's Agent.InboxStats) at every scrape.
func (m *Metrics) WatchInbox(party string, stats func() map[string]inbox.Stats) {
	m.sources.mu.Lock()
	m.sources.inboxes[party] = stats
	m.sources.mu.Unlock()
}

// WatchGate reports client's privacy spending (its gate's) at every
// scrape.
func (m *Metrics) WatchGate(client string, g *privacy.Gate) {
	m.sources.mu.Lock()
	m.sources.gates[client] = g
	m.sources.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (s *sources) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.rejected, s.trafficMsgs, s.trafficBytes, s.inboxReceived, s.inboxDropped, s.inboxDroppedBytes, s.reconnects, s.disconnects, s.slow, s.asyncErrs,
		s.epsilon, s.clientEps, s.delta, s.budgetLeft, s.nodeLeft, s.nodeEps, s.nodeRho} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *sources) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	rejects := make(map[string]func() map[string]uint64, len(s.rejects))
	for k, v := range s.rejects {
		rejects[k] = v
	}
	conns := make(map[string]func() bus.ConnCounts, len(s.conns))
	for k, v := range s.conns {
		conns[k] = v
	}
	traffic := make(map[string]func(string) map[bus.Kind]bus.Traffic, len(s.traffic))
	for k, v := range s.traffic {
		traffic[k] = v
	}
	inboxes := make(map[string]func() map[string]inbox.Stats, len(s.inboxes))
	for k, v := range s.inboxes {
		inboxes[k] = v
	}
	gates := make(map[string]*privacy.Gate, len(s.gates))
	for k, v := range s.gates {
		gates[k] = v
	}
	s.mu.Unlock()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for party, f := range rejects {
		for reason, n := range f() {
			counter(s.rejected, float64(n), party, reason)
		}
	}
	for party, f := range conns {
		c := f()
		counter(s.reconnects, float64(c.Reconnects), party)
		counter(s.disconnects, float64(c.Disconnects), party)
		counter(s.slow, float64(c.SlowConsumer), party)
		counter(s.asyncErrs, float64(c.Errors), party)
	}
	for party, f := range traffic {
		for _, dir := range []string{bus.DirectionSent, bus.DirectionReceived} {
			for ch, c := range f(dir) {
				counter(s.trafficMsgs, float64(c.Messages), party, string(ch), dir)
				counter(s.trafficBytes, float64(c.Bytes), party, string(ch), dir)
			}
		}
	}
	for party, f := range inboxes {
		for sender, st := range f() {
			counter(s.inboxReceived, float64(st.Received), party, sender)
			counter(s.inboxDropped, float64(st.Dropped), party, sender)
			counter(s.inboxDroppedBytes, float64(st.DroppedBytes), party, sender)
		}
	}
	for client, g := range gates {
		s.collectGate(client, g, gauge)
	}
}

// collectGate reports one client's spending.
func (s *sources) collectGate(client string, g *privacy.Gate, gauge func(*prometheus.Desc, float64, ...string)) {
	b := g.NodeBudget()
	sp := g.Spent(b.NodeRho)
	gauge(s.delta, sp.Delta, client)
	for ch, eps := range sp.Channels {
		gauge(s.epsilon, eps, client, string(ch))
	}
	gauge(s.clientEps, sp.Client, client)
	if b.Epsilon > 0 {
		gauge(s.budgetLeft, math.Max(b.Epsilon-sp.Client, 0), client)
	}
	if b.NodeEpsilon > 0 {
		gauge(s.nodeLeft, math.Max(b.NodeEpsilon-sp.WorstNode, 0), client)
	}
	for _, p := range g.NodeEpsilons() {
		q := strconv.FormatFloat(p.Q, 'g', -1, 64)
		gauge(s.nodeRho, p.Rho, client, q)
		gauge(s.nodeEps, p.WorstEpsilon, client, q, "worst")
		gauge(s.nodeEps, p.MedianEpsilon, client, q, "median")
	}
}
