package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/telemetry"
)

// metricsFlags serve a process's live metrics (docs/METRICS.md):
// --metrics-addr on aggregator, agent and sim.
type metricsFlags struct {
	addr   string
	linger time.Duration
}

func (mf *metricsFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&mf.addr, "metrics-addr", "", "serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a free port, logged); empty: off")
	f.DurationVar(&mf.linger, "metrics-linger", 0, "with --metrics-addr: keep serving the final metrics this long after the job ended and its report was written, for a last scrape (SIGINT or SIGTERM ends the wait)")
}

// start serves a fresh registry at --metrics-addr and logs the address it
// bound; stop waits out --metrics-linger (or a signal) and shuts the
// server down. Without --metrics-addr the metrics are nil and stop does
// nothing.
func (mf *metricsFlags) start(ctx context.Context, log zerolog.Logger) (m *telemetry.Metrics, stop func(), err error) {
	if mf.addr == "" {
		return nil, func() {}, nil
	}
	m = telemetry.New()
	// The server outlives the job's context by the linger: a signal ends
	// the wait below instead.
	srv, err := telemetry.Serve(context.WithoutCancel(ctx), mf.addr, m.Handler())
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	addr := srv.Addr().String()
	log.Info().Str("addr", addr).Str("url", "http://"+addr+"/metrics").Msg("serving metrics")
	return m, func() {
		if mf.linger > 0 {
			log.Info().Str("addr", addr).Dur("linger", mf.linger).Msg("job over: metrics served until the linger ends")
			t := time.NewTimer(mf.linger)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if err := srv.Shutdown(context.Background()); err != nil {
			log.Warn().Err(err).Msg("metrics server")
		}
	}, nil
}
