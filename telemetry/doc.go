// Package telemetry exposes a graphfed process's live figures as
// Prometheus metrics (docs/METRICS.md lists them).
//
// Nothing here is global: a process builds one Metrics, with its own
// prometheus.Registry, and hands it to the parties it runs (deploy's
// AggregatorOptions.Metrics and AgentOptions.Metrics; a simulation hands
// the same one to every party, whose party and client labels tell them
// apart). The pure machines stay free of I/O: the aggregator's and the
// agent's drivers report each step to an Observer (AggregatorRecorder,
// AgentRecorder), the NATS transport reports its traffic (Traffic), the
// ledger is wrapped by a decorator that times its appends (Ledger), and
// the figures that already exist as counters (the validator's rejects,
// the connection's events, the privacy gate's spending) are read when
// Prometheus scrapes (Watch*), so that the metrics and the JSON report of
// a run are the same numbers.
package telemetry
