package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"graphfed/operator"
)

// newServerCmd is `graphfed server`: flags into operator.ServerConfig,
// the embedded nats-server run until stopped.
func newServerCmd(g *globalFlags) *cobra.Command {
	cfg := operator.DefaultServerConfig()
	var mf metricsFlags // --metrics-addr only: the server runs until stopped, so there is nothing to linger after
	cmd := &cobra.Command{
		Use:   "server --config FILE [--port P] [--store DIR] | server --insecure",
		Short: "Run graphfed's embedded nats-server (JetStream on) as a standalone process",
		Long: `Run graphfed's embedded nats-server with JetStream, from the configuration graphfed keys writes
(one login per party, with its permissions). Without --config it refuses to run unless --insecure.
The JetStream store (the privacy ledger, durable jobs' checkpoints) survives restarts.
What the server refuses is logged as warn lines with an event field, rate-limited, and counted
in --metrics-addr's graphfed_server_events_total (docs/DEPLOY.md, docs/METRICS.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			if err := requireCredentials("server", cfg.ConfigFile != "", cfg.Insecure, "--config FILE with the parties' logins", log); err != nil {
				return err
			}
			srv, err := operator.StartServer(cfg, log)
			var open *operator.NoLoginsError
			if errors.As(err, &open) {
				return fmt.Errorf("graphfed server: %w; %s, or pass --insecure", err, operator.KeysHint)
			} else if err != nil {
				return fmt.Errorf("graphfed server: %w", err)
			}
			defer srv.Shutdown()
			m, stopMetrics, err := mf.start(cmd.Context(), log)
			if err != nil {
				return fmt.Errorf("graphfed server: %w", err)
			}
			defer stopMetrics()
			if m != nil {
				if err := m.WatchServer(srv); err != nil {
					return fmt.Errorf("graphfed server: %w", err)
				}
			}
			fmt.Fprintln(g.humanOut(), "nats-server listening on", srv.ClientURL())
			operator.Serve(cmd.Context(), srv, cfg, log)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Host, "host", cfg.Host, "listen address")
	f.IntVar(&cfg.Port, "port", cfg.Port, "client port (-1: random)")
	f.StringVar(&cfg.StoreDir, "store", "", "JetStream store directory (default: the configuration's store_dir, else $XDG_STATE_HOME/graphfed/jetstream or ~/.local/state/graphfed/jetstream)")
	f.StringVar(&cfg.ConfigFile, "config", "", "nats-server configuration file from graphfed keys (logins, permissions, cluster)")
	f.StringVar(&mf.live.Addr, "metrics-addr", "", "serve Prometheus metrics (the server's refusals, graphfed_server_events_total) at http://HOST:PORT/metrics (port 0: a free port, logged); empty: off")
	registerInsecure(cmd, &cfg.Insecure)
	return cmd
}
