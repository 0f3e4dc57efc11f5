package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "graphfed"

// Label names.
const (
	LabelParty     = "party"     // the reporting party: "aggregator" or a client id
	LabelClient    = "client"    // the client a privacy figure is about
	LabelChannel   = "channel"   // a message kind (bus.ChannelOf) or a privacy channel
	LabelDirection = "direction" // bus.DirectionSent or bus.DirectionReceived
	LabelReason    = "reason"
	LabelSender    = "sender" // whom a party's inbox charges a message to
	LabelResult    = "result" // "ok" or "error"
	LabelWithheld  = "withheld"
	LabelPercent   = "rho_percentile" // the calibration percentile q of ρ_q
	LabelNode      = "node"           // "worst" or "median"
)

// Histogram buckets, in seconds: a round or a round's training (from a
// tenth of a second on a laptop to the ten minutes of an AMLworld round),
// and a ledger append (a local fsync to a JetStream cluster waiting out a
// leader election).
// Functions, not variables: no package-level mutable state.
func roundBuckets() []float64 { return []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 600} }
func ledgerBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10}
}

// Metrics is one process's metrics: a registry of its own and the
// collectors every party of the process records into. Safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	// aggregator
	roundsClosed   *prometheus.CounterVec
	roundDuration  prometheus.Histogram
	round          prometheus.Gauge
	liveClients    prometheus.Gauge
	accepted       prometheus.Counter
	stale          prometheus.Counter
	lateClients    prometheus.Counter
	dropped        *prometheus.CounterVec
	staleness      prometheus.Histogram
	aggregatorOnce sync.Once

	// every party
	ledgerAppend  *prometheus.CounterVec
	ledgerTime    *prometheus.HistogramVec
	ledgerRetries *prometheus.CounterVec

	// agents
	updatesSent   *prometheus.CounterVec
	embSent       *prometheus.CounterVec
	stepTime      *prometheus.HistogramVec
	budgetRefused *prometheus.CounterVec

	// read at scrape time (sources.go)
	sources *sources
}

// New returns a process's metrics on a fresh registry, with the Go
// runtime's and the process's own collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, sources: newSources()}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	m.roundsClosed = counterVec("rounds_closed_total", "Rounds the aggregator closed, by close reason (quorum, deadline, buffer).", LabelReason)
	m.roundDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "round_duration_seconds",
		Help: "Time from a round's opening to its close.", Buckets: roundBuckets()})
	m.round = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "round", Help: "The round the aggregator has open (the last one once finished)."})
	m.liveClients = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "clients_live", Help: "Clients counted towards the quorum at the last close."})
	m.accepted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "updates_accepted_total", Help: "Updates that counted for their own round when it closed."})
	m.stale = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "updates_stale_total", Help: "Late updates from an earlier round folded into a round with a staleness weight."})
	m.lateClients = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "round_late_clients_total", Help: "Live clients that had not answered when a round closed, summed over rounds."})
	m.dropped = counterVec("updates_dropped_total", "Updates the aggregator's machine did not count, by reason (late, duplicate, unknown_client, future, finished, non_finite, shape, ...).", LabelReason)
	m.staleness = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "update_staleness_rounds",
		Help: "Rounds between the round an update was trained for and the round open when it arrived.", Buckets: []float64{0, 1, 2, 3, 5, 8, 13, 21}})
	m.ledgerAppend = counterVec("ledger_appends_total", "Privacy ledger appends, by entry channel and result (ok, error).", LabelParty, LabelChannel, LabelResult)
	m.ledgerRetries = counterVec("ledger_append_retries_total", "Privacy ledger appends repeated after a transient failure (bus.RetryLedger), by entry channel.", LabelParty, LabelChannel)
	m.ledgerTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "ledger_append_duration_seconds",
		Help: "Latency of privacy ledger appends (durable when they return).", Buckets: ledgerBuckets()}, []string{LabelParty})
	m.updatesSent = counterVec("agent_updates_sent_total", "Updates an agent published, withheld (budget spent, no parameters) or not.", LabelParty, LabelWithheld)
	m.embSent = counterVec("agent_embeddings_sent_total", "Boundary embedding messages an agent published to its neighbours.", LabelParty)
	m.stepTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "agent_train_duration_seconds",
		Help: "Time of an agent's machine step that trained a round and released its update.", Buckets: roundBuckets()}, []string{LabelParty})
	m.budgetRefused = counterVec("privacy_budget_exhausted_total", "Releases the privacy gate refused for budget, by channel (the channel is withheld from then on).", LabelClient, LabelChannel)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.ledgerAppend, m.ledgerTime, m.ledgerRetries, m.updatesSent, m.embSent, m.stepTime, m.budgetRefused, m.sources)
	return m
}

// Registry is the process's registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}
