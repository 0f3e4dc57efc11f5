package telemetry

import (
	"graphfed/bus"
)

// Traffic is a party's bus.TrafficObserver: its messages and bytes by
// channel and direction.
type Traffic struct {
	m     *Metrics
	party string
}

// Traffic returns party's traffic observer (NATSTransport.SetTraffic).
func (m *Metrics) Traffic(party string) *Traffic { return &Traffic{m: m, party: party} }

// Traffic implements bus.TrafficObserver.
func (t *Traffic) Traffic(direction, subject string, bytes int) {
	ch := bus.ChannelOf(subject)
	t.m.trafficMsgs.WithLabelValues(t.party, ch, direction).Inc()
	t.m.trafficBytes.WithLabelValues(t.party, ch, direction).Add(float64(bytes))
}
