package main

import (
	"github.com/spf13/cobra"

	"graphfed/operator"
)

// newServerCmd is `graphfed server`: flags into operator.ServerConfig,
// the embedded nats-server run until stopped.
func newServerCmd(g *globalFlags) *cobra.Command {
	cfg := operator.DefaultServerConfig()
	cmd := &cobra.Command{
		Use:   "server --config FILE [--port P] [--store DIR] | server --insecure",
		Short: "Run graphfed's embedded nats-server (JetStream on) as a standalone process",
		Long: `Run graphfed's embedded nats-server with JetStream, from graphfed keys' configuration (without
--config only with --insecure); its store survives restarts, its refusals are logged (docs/DEPLOY.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			if err := requireCredentials("server", cfg.ConfigFile != "", cfg.Insecure, "--config FILE with the parties' logins", log); err != nil {
				return err
			}
			return operator.RunServer(cmd.Context(), cfg, g.humanOut(), log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Host, "host", cfg.Host, "listen address")
	f.IntVar(&cfg.Port, "port", cfg.Port, "client port (-1: random)")
	f.StringVar(&cfg.StoreDir, "store", "", "JetStream store directory (default: the configuration's store_dir, else $XDG_STATE_HOME/graphfed/jetstream or ~/.local/state/graphfed/jetstream)")
	f.StringVar(&cfg.ConfigFile, "config", "", "nats-server configuration file from graphfed keys (logins, permissions, cluster)")
	f.StringVar(&cfg.Metrics.Addr, "metrics-addr", "", "serve Prometheus metrics (the server's refusals, graphfed_server_events_total) at http://HOST:PORT/metrics (port 0: a free port, logged); empty: off")
	registerInsecure(cmd, &cfg.Insecure)
	return cmd
}
