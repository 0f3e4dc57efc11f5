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
	)
	cmd := &cobra.Command{
		Use:   "server --config FILE [--port P] [--store DIR] | server --insecure",
		Short: "Run graphfed's embedded nats-server (JetStream on) as a standalone process",
		Long: `Run graphfed's embedded nats-server with JetStream, from the configuration graphfed keys writes
(one login per party, with its permissions). Without --config it refuses to run unless --insecure.
The JetStream store (the privacy ledger, durable jobs' checkpoints) is --store, else the configuration's
store_dir, else ` + "`$XDG_STATE_HOME/graphfed/jetstream`" + ` (default ~/.local/state/graphfed/jetstream): it survives restarts.`,
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
			srv, err := bus.StartServer(o)
			if err != nil {
				return err
			}
			defer srv.Shutdown()
			if !srv.Authenticated() && !insecure {
				return fmt.Errorf("graphfed server: refusing to run: the configuration %s lists no logins, so anyone could connect; "+
					"%s, or pass --insecure", o.ConfigFile, keysHint)
			}
			fmt.Fprintln(g.humanOut(), "nats-server listening on", srv.ClientURL())
			log.Info().Str("url", srv.ClientURL()).Str("config", o.ConfigFile).Bool("auth", srv.Authenticated()).
				Str("store", srv.StoreDir()).Bool("store_temporary", srv.Temporary()).Bool("jetstream", !o.NoJetStream).
				Int("max_payload", srv.MaxPayload()).
				Msg("server ready")
			<-cmd.Context().Done()
			log.Info().Str("reason", fmt.Sprint(contextCause(cmd.Context()))).Msg("server stopping")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Host, "host", "127.0.0.1", "listen address")
	f.IntVar(&o.Port, "port", 4222, "client port (-1: random)")
	f.StringVar(&o.StoreDir, "store", "", "JetStream store directory (default: the configuration's store_dir, else $XDG_STATE_HOME/graphfed/jetstream or ~/.local/state/graphfed/jetstream)")
	f.StringVar(&o.ConfigFile, "config", "", "nats-server configuration file from graphfed keys (logins, permissions, cluster)")
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
