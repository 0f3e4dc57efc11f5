package deploy

import (
	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/telemetry"
)

// Live metrics (telemetry): a party built with Metrics set records into
// them; nil records nothing. The wiring lives here so that the parties'
// constructors only call it.

// observeAggregator connects the aggregator's transport and connection
// events to m and returns the round server's observer (nil without m).
func observeAggregator(m *telemetry.Metrics, tr *bus.NATSTransport, events *bus.ConnEvents) aggregator.Observer {
	if m == nil {
		return nil
	}
	observeConn(m, bus.AggregatorID, tr, events)
	return m.Aggregator()
}

// observeAgent connects the agent's transport and connection events to m,
// wraps its ledger and returns the ledger to use and the agent's observer
// (nil without m).
func observeAgent(m *telemetry.Metrics, id string, tr *bus.NATSTransport, events *bus.ConnEvents, l privacy.Ledger) (privacy.Ledger, agent.Observer) {
	if m == nil {
		return l, nil
	}
	observeConn(m, id, tr, events)
	return m.Ledger(id, l), m.Agent(id)
}

// observeConn reports party's traffic and connection events to m.
func observeConn(m *telemetry.Metrics, party string, tr *bus.NATSTransport, events *bus.ConnEvents) {
	m.WatchTraffic(party, tr.TrafficOf)
	if events != nil {
		m.WatchConn(party, events.Counts)
	}
}
