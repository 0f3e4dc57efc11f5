package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/telemetry"
)

// ServerConfig is `graphfed server`: the embedded nats-server with
// JetStream, from the configuration WriteKeys writes.
type ServerConfig struct {
	bus.ServerOptions
	// Insecure lets a configuration without logins run: anyone who
	// reaches the server could then read and forge every message.
	Insecure bool
	// Metrics serves the server's refusals (RunServer): its address only,
	// since the server runs until stopped and nothing follows to linger
	// after.
	Metrics telemetry.Live
}

// DefaultServerConfig is `graphfed server` without flags.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{ServerOptions: bus.ServerOptions{Host: "127.0.0.1", Port: 4222}}
}

// NoLoginsError is StartServer's refusal of a configuration that lists no
// logins without Insecure.
type NoLoginsError struct{ ConfigFile string }

func (e *NoLoginsError) Error() string {
	return fmt.Sprintf("refusing to run: the configuration %s lists no logins, so anyone could connect", e.ConfigFile)
}

// StartServer starts the server of cfg, its JetStream store (the privacy
// ledger, durable jobs' checkpoints) persistent: cfg.StoreDir, else the
// configuration's store_dir, else DefaultStoreDir. The server's own lines
// go to log (its notices at debug, its refusals at warn). A server
// without logins is shut down again and refused (*NoLoginsError) unless
// cfg.Insecure.
func StartServer(cfg ServerConfig, log zerolog.Logger) (*bus.Server, error) {
	o := cfg.ServerOptions
	if o.DefaultStoreDir == "" {
		def, err := DefaultStoreDir()
		if err != nil {
			return nil, fmt.Errorf("%w (give --store DIR)", err)
		}
		o.DefaultStoreDir = def
	}
	if o.Logger == nil {
		o.Logger = &log
	}
	srv, err := bus.StartServer(o)
	if err != nil {
		return nil, err
	}
	if !srv.Authenticated() && !cfg.Insecure {
		srv.Shutdown()
		return nil, &NoLoginsError{ConfigFile: o.ConfigFile}
	}
	return srv, nil
}

// Serve logs that srv is ready and waits for ctx's end; then it logs why
// and what the server refused over its life, for an operator who does not
// scrape its metrics. The caller shuts srv down.
func Serve(ctx context.Context, srv *bus.Server, cfg ServerConfig, log zerolog.Logger) {
	log.Info().Str("url", srv.ClientURL()).Str("config", cfg.ConfigFile).Bool("auth", srv.Authenticated()).
		Str("store", srv.StoreDir()).Bool("store_temporary", srv.Temporary()).Bool("jetstream", !cfg.NoJetStream).
		Int("max_payload", srv.MaxPayload()).
		Msg("server ready")
	<-ctx.Done()
	reason := context.Cause(ctx)
	if reason == nil {
		reason = ctx.Err()
	}
	log.Info().Str("reason", fmt.Sprint(reason)).Interface("refusals", srv.Refusals()).Msg("server stopping")
}

// DefaultStoreDir is the persistent JetStream store of `graphfed server`:
// $XDG_STATE_HOME/graphfed/jetstream (an absolute XDG_STATE_HOME only, as
// the XDG spec says), or ~/.local/state/graphfed/jetstream.
func DefaultStoreDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "graphfed", "jetstream"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default store directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "graphfed", "jetstream"), nil
}
