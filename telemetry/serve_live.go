package telemetry

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// Live is a process's metrics endpoint as its command line states it
// (--metrics-addr, --metrics-linger): where to serve a fresh registry,
// and how long to keep serving the final figures after the job, for a
// last scrape.
type Live struct {
	Addr   string // HOST:PORT (port 0: a free one, logged); empty: off
	Linger time.Duration
}

// Start serves a fresh registry at l.Addr and logs the address it bound;
// stop waits out l.Linger (or the end of ctx) and shuts the server down.
// Without an address the metrics are nil and stop does nothing.
func (l Live) Start(ctx context.Context, log zerolog.Logger) (m *Metrics, stop func(), err error) {
	if l.Addr == "" {
		return nil, func() {}, nil
	}
	m = New()
	// The server outlives the job's context by the linger: the end of ctx
	// ends the wait below instead.
	srv, err := Serve(context.WithoutCancel(ctx), l.Addr, m.Handler())
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	addr := srv.Addr().String()
	log.Info().Str("addr", addr).Str("url", "http://"+addr+"/metrics").Msg("serving metrics")
	return m, func() {
		if l.Linger > 0 {
			log.Info().Str("addr", addr).Dur("linger", l.Linger).Msg("job over: metrics served until the linger ends")
			t := time.NewTimer(l.Linger)
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

// Deferred is Start put off until a job calls start (once its spec checks
// out); stop ends the serving as Start's does, and does nothing if start
// never served.
func (l Live) Deferred(ctx context.Context, log zerolog.Logger) (start func() (*Metrics, error), stop func()) {
	stopServing := func() {}
	return func() (*Metrics, error) {
		m, s, err := l.Start(ctx, log)
		if err == nil {
			stopServing = s
		}
		return m, err
	}, func() { stopServing() }
}
