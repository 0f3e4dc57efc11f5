package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"graphfed/bus"
)

func newServerCmd(g *globalFlags) *cobra.Command {
	var (
		o        bus.ServerOptions
		insecure bool
		mf       metricsFlags // --metrics-addr only: the server runs until stopped, so there is nothing to linger after
	)
	cmd := &cobra.Command{
		Use:   "server --config FILE [--port P] [--store DIR] | server --insecure",
		Short: "Run graphfed's embedded nats-server (JetStream on) as a standalone process",
		Long: `Run graphfed's embedded nats-server with JetStream, from the configuration graphfed keys writes
(one login per party, with its permissions). Without --config it refuses to run unless --insecure.
The JetStream store (the privacy ledger, durable jobs' checkpoints) is --store, else the configuration's
store_dir, else ` + "`$XDG_STATE_HOME/graphfed/jetstream`" + ` (default ~/.local/state/graphfed/jetstream): it survives restarts.
What the server refuses (permission violations, failed logins, slow consumers, limits hit) is logged as
warn lines with an event field, rate-limited, and counted in --metrics-addr's graphfed_server_events_total
(docs/METRICS.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			if err := requireCredentials("server", o.ConfigFile != "", insecure, "--config FILE with the parties' logins", log); err != nil {
				return err
			}
			def, err := defaultStoreDir()
			if err != nil {
				return fmt.Errorf("graphfed server: %w (give --store DIR)", err)
			}
			o.DefaultStoreDir = def
			// The server's own lines go to the process's log; the level
			// flag applies (its notices are debug, its refusals warn).
			o.Logger = &log
			srv, err := bus.StartServer(o)
			if err != nil {
				return err
			}
			defer srv.Shutdown()
			if !srv.Authenticated() && !insecure {
				return fmt.Errorf("graphfed server: refusing to run: the configuration %s lists no logins, so anyone could connect; "+
					"%s, or pass --insecure", o.ConfigFile, keysHint)
			}
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
			log.Info().Str("url", srv.ClientURL()).Str("config", o.ConfigFile).Bool("auth", srv.Authenticated()).
				Str("store", srv.StoreDir()).Bool("store_temporary", srv.Temporary()).Bool("jetstream", !o.NoJetStream).
				Int("max_payload", srv.MaxPayload()).
				Msg("server ready")
			<-cmd.Context().Done()
			// What the server refused over its life, for an operator who
			// does not scrape it.
			log.Info().Str("reason", fmt.Sprint(contextCause(cmd.Context()))).Interface("refusals", srv.Refusals()).Msg("server stopping")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Host, "host", "127.0.0.1", "listen address")
	f.IntVar(&o.Port, "port", 4222, "client port (-1: random)")
	f.StringVar(&o.StoreDir, "store", "", "JetStream store directory (default: the configuration's store_dir, else $XDG_STATE_HOME/graphfed/jetstream or ~/.local/state/graphfed/jetstream)")
	f.StringVar(&o.ConfigFile, "config", "", "nats-server configuration file from graphfed keys (logins, permissions, cluster)")
	f.StringVar(&mf.addr, "metrics-addr", "", "serve Prometheus metrics (the server's refusals, graphfed_server_events_total) at http://HOST:PORT/metrics (port 0: a free port, logged); empty: off")
	registerInsecure(cmd, &insecure)
	return cmd
}

// defaultStoreDir is the persistent JetStream store of `graphfed server`:
// $XDG_STATE_HOME/graphfed/jetstream, or ~/.local/state/graphfed/jetstream.
func defaultStoreDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "graphfed", "jetstream"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default store directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "graphfed", "jetstream"), nil
}
