package main

import (
	"context"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/telemetry"
)

// metricsFlags serve a process's live metrics (docs/METRICS.md):
// --metrics-addr on aggregator, agent and sim.
type metricsFlags struct{ live telemetry.Live }

func (mf *metricsFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&mf.live.Addr, "metrics-addr", "", "serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a free port, logged); empty: off")
	f.DurationVar(&mf.live.Linger, "metrics-linger", 0, "with --metrics-addr: keep serving the final metrics this long after the job ended and its report was written, for a last scrape (SIGINT or SIGTERM ends the wait)")
}

// start serves the metrics (telemetry.Live.Start); stop ends the serving.
func (mf *metricsFlags) start(ctx context.Context, log zerolog.Logger) (m *telemetry.Metrics, stop func(), err error) {
	return mf.live.Start(ctx, log)
}
