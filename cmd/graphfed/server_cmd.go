package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"graphfed/bus"
)

func newServerCmd(g *globalFlags) *cobra.Command {
	var o bus.ServerOptions
	cmd := &cobra.Command{
		Use:   "server [--port P] [--store DIR] [--config FILE]",
		Short: "Run graphfed's embedded nats-server (JetStream on) as a standalone process",
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := bus.StartServer(o)
			if err != nil {
				return err
			}
			defer srv.Shutdown()
			fmt.Fprintln(g.humanOut(), "nats-server listening on", srv.ClientURL())
			log := g.logger()
			log.Info().Str("url", srv.ClientURL()).Msg("server ready")
			<-cmd.Context().Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Host, "host", "127.0.0.1", "listen address")
	f.IntVar(&o.Port, "port", 4222, "client port (-1: random)")
	f.StringVar(&o.StoreDir, "store", "", "JetStream store directory (default: temporary)")
	f.StringVar(&o.ConfigFile, "config", "", "nats-server configuration file (credentials, cluster)")
	return cmd
}
