package telemetry

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"graphfed/bus"
)

// LabelKind is the kind of a server log event (bus.ServerEvent*).
const LabelKind = "kind"

// ServerEvents is what an embedded nats-server counts of its log
// (*bus.Server): its events by kind and reason, and the lines its log
// limit held back.
type ServerEvents interface {
	Events() map[bus.ServerEventKey]int64
	LogSuppressed() map[string]int64
}

// WatchServer reports srv's event counts at every scrape, read from srv
// as the other sources are (the counts are the server's own, not counted
// again). One server per Metrics: a second is refused, since its series
// would collide with the first's.
func (m *Metrics) WatchServer(srv ServerEvents) error {
	if err := m.reg.Register(newServerSource(srv)); err != nil {
		return fmt.Errorf("telemetry: watch server: %w", err)
	}
	return nil
}

// serverSource collects a server's events at scrape time.
type serverSource struct {
	srv                ServerEvents
	events, suppressed *prometheus.Desc
}

func newServerSource(srv ServerEvents) *serverSource {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &serverSource{srv: srv,
		events: desc("server_events_total", "Events of the embedded nats-server's log, by kind (permission_violation, authorization_failure, slow_consumer, limit, warning, error) and reason; counted whether or not the line was written.",
			LabelKind, LabelReason),
		suppressed: desc("server_log_suppressed_total", "Server events whose log line the rate limit held back (counted in graphfed_server_events_total all the same), by kind.",
			LabelKind),
	}
}

// Describe implements prometheus.Collector.
func (s *serverSource) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.events
	ch <- s.suppressed
}

// Collect implements prometheus.Collector.
func (s *serverSource) Collect(ch chan<- prometheus.Metric) {
	for k, n := range s.srv.Events() {
		ch <- prometheus.MustNewConstMetric(s.events, prometheus.CounterValue, float64(n), k.Kind, k.Reason)
	}
	for kind, n := range s.srv.LogSuppressed() {
		ch <- prometheus.MustNewConstMetric(s.suppressed, prometheus.CounterValue, float64(n), kind)
	}
}
