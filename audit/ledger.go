package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// openLedger opens cfg's ledger source, read-only: a ledger file or a
// job's JetStream streams. done releases the source (the NATS
// connection) once the audit is over.
func openLedger(ctx context.Context, cfg Config, log zerolog.Logger) (l privacy.Ledger, done func(), err error) {
	switch {
	case cfg.Ledger != "" && cfg.NATS != "":
		return nil, nil, errors.New("--ledger and --nats are mutually exclusive: audit a ledger file or a job's JetStream ledger, not both")
	case cfg.NATS != "":
		return openJetStream(ctx, cfg, log)
	case cfg.Ledger == "":
		return nil, nil, errors.New("--ledger PATH or --nats URL --job ID is required")
	}
	fl, err := privacy.OpenFileLedgerReadOnly(cfg.Ledger)
	if err != nil {
		return nil, nil, err
	}
	if tt, ok := fl.TornTail(); ok {
		log.Warn().Str("ledger", cfg.Ledger).Int64("offset", tt.Offset).Int("bytes", tt.Bytes).Str("head", tt.Head).
			Msg("ledger ends in a torn line (a crash during an append whose release was never published); skipped")
	}
	return fl, func() {}, nil
}

// openJetStream binds, read-only, to the ledger streams of cfg.Job: it
// never creates a stream, and refuses one that is not append-only.
func openJetStream(ctx context.Context, cfg Config, log zerolog.Logger) (privacy.Ledger, func(), error) {
	if cfg.Job == "" {
		return nil, nil, errors.New("--nats needs --job: each job's ledger is its own stream")
	}
	if !bus.ValidID(cfg.Job) {
		return nil, nil, fmt.Errorf("--job %q does not match [a-z0-9-]{1,64}", cfg.Job)
	}
	nc, err := bus.Connect(cfg.NATS, bus.ConnectOptions{Name: "graphfed-audit-" + cfg.Job, Creds: cfg.Creds,
		TLSCA: cfg.TLS.CA, TLSCert: cfg.TLS.Cert, TLSKey: cfg.TLS.Key})
	if err != nil {
		return nil, nil, err
	}
	// Connect keeps retrying an unreachable server in the background; an
	// audit should fail now instead.
	if !nc.IsConnected() {
		nc.Close()
		return nil, nil, fmt.Errorf("--nats %s: no server reachable", cfg.NATS)
	}
	var ring *bus.Keyring
	if cfg.Keyring != "" {
		if ring, err = bus.LoadKeyring(cfg.Keyring); err != nil {
			nc.Close()
			return nil, nil, fmt.Errorf("--keyring: %w", err)
		}
	}
	// In the accounts layout each party's entries are a stream of their
	// own, and the keyring names the parties.
	l, err := deploy.OpenAuditLedger(ctx, nc, cfg.Job, ring)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	log.Debug().Str("nats", nc.ConnectedUrlRedacted()).Str("stream", l.Stream()).Msg("auditing the JetStream ledger")
	return l, nc.Close, nil
}
