package telemetry

import (
	"graphfed/aggregator"
)

// AggregatorRecorder records the aggregator's close decisions, drops and
// staleness from the steps of its machine; it is the round server's
// aggregator.Observer.
type AggregatorRecorder struct{ m *Metrics }

// Aggregator returns the recorder of the process's aggregator, registering
// the aggregator's metrics on first use (an agent's process has none).
func (m *Metrics) Aggregator() *AggregatorRecorder {
	m.aggregatorOnce.Do(func() {
		m.reg.MustRegister(m.roundsClosed, m.roundDuration, m.round, m.liveClients, m.accepted, m.stale,
			m.lateClients, m.dropped, m.staleness)
	})
	return &AggregatorRecorder{m: m}
}

// Stepped implements aggregator.Observer.
func (r *AggregatorRecorder) Stepped(ev aggregator.Event, round uint64, acts []aggregator.Action) {
	m := r.m
	// Staleness is measured on arrival, for every update of a round that
	// was open or is past (one for a later round is dropped as "future").
	if u, ok := ev.(aggregator.UpdateIn); ok && u.Round <= round {
		m.staleness.Observe(float64(round - u.Round))
	}
	for _, a := range acts {
		switch x := a.(type) {
		case aggregator.OpenRound:
			m.round.Set(float64(x.Round))
		case aggregator.RoundClosed:
			m.roundsClosed.WithLabelValues(x.Reason).Inc()
			m.roundDuration.Observe(x.Duration.Seconds())
			m.accepted.Add(float64(len(x.In)))
			m.stale.Add(float64(len(x.Stale)))
			m.lateClients.Add(float64(len(x.Late)))
			m.liveClients.Set(float64(x.Live))
		case aggregator.Dropped:
			// As the JSON report's "dropped": every drop the machine
			// decides, by reason.
			m.dropped.WithLabelValues(x.Reason).Inc()
		}
	}
}
