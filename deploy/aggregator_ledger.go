package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

// AggregatorLedger is the aggregator's gate over job's privacy ledger,
// where it appends its start, round and done records (aggregator
// ServerConfig.Ledger, privacy/records.go): its own stream in the
// accounts layout, the job's single stream otherwise, signed with
// signer's key and read back with ring's (both nil in a plain run). A
// server without JetStream has no ledger stream to write to (the banks
// then keep file ledgers): the aggregator goes on without records, says
// so, and returns nil; the audit then says it cannot tell a ledger that
// lost the tails of its chains.
func AggregatorLedger(ctx context.Context, tr *bus.NATSTransport, job string, ring *bus.Keyring, signer *bus.Signer,
	now func() time.Time, log zerolog.Logger) (*privacy.Gate, error) {
	l, _, err := Ledger(ctx, job, bus.AggregatorID, PrivacyOptions{}, tr, ring)
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		log.Warn().Str("job", job).Err(err).Msg("no JetStream: the aggregator keeps no round records in the ledger, and an audit cannot check the chains' tails")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deploy: aggregator ledger of %s: %w", job, err)
	}
	cfg := privacy.Config{Job: job, Client: privacy.AggregatorClient, Delta: DefaultDelta, Keys: LedgerKeys(ring)}
	if signer != nil {
		cfg.Signer = signer
	}
	g, err := privacy.NewGate(context.WithoutCancel(ctx), cfg, l, now)
	if err != nil {
		return nil, fmt.Errorf("deploy: aggregator ledger of %s: %w", job, err)
	}
	logLedgerReading(log, g.Reading())
	return g, nil
}
