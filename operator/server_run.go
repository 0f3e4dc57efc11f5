package operator

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rs/zerolog"
)

// RunServer is `graphfed server` whole: StartServer (a refusal for want
// of logins says how to make them), the server's refusals served as
// metrics at cfg.Metrics, its client URL written to out, then Serve until
// ctx ends; the server is shut down before RunServer returns.
func RunServer(ctx context.Context, cfg ServerConfig, out io.Writer, log zerolog.Logger) error {
	srv, err := StartServer(cfg, log)
	var open *NoLoginsError
	if errors.As(err, &open) {
		return fmt.Errorf("graphfed server: %w; %s, or pass --insecure", err, KeysHint)
	} else if err != nil {
		return fmt.Errorf("graphfed server: %w", err)
	}
	defer srv.Shutdown()
	m, stopMetrics, err := cfg.Metrics.Start(ctx, log)
	if err != nil {
		return fmt.Errorf("graphfed server: %w", err)
	}
	defer stopMetrics()
	if m != nil {
		if err := m.WatchServer(srv); err != nil {
			return fmt.Errorf("graphfed server: %w", err)
		}
	}
	fmt.Fprintln(out, "nats-server listening on", srv.ClientURL())
	Serve(ctx, srv, cfg, log)
	return nil
}
