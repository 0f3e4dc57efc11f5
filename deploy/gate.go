package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

// Ledger opens the privacy ledger p names for job: the file at
// p.LedgerPath, or else the job's JetStream ledger stream on tr's
// connection (created if missing and the party may create it). With a
// keyring, the stream's writer finds each client's chain head among the
// entries its key signed. The returned close releases a file ledger; the
// stream needs none.
func Ledger(ctx context.Context, job string, p PrivacyOptions, tr *bus.NATSTransport, ring *bus.Keyring) (privacy.Ledger, func() error, error) {
	if p.LedgerPath != "" {
		fl, err := privacy.OpenFileLedger(p.LedgerPath)
		if err != nil {
			return nil, nil, fmt.Errorf("deploy: ledger: %w", err)
		}
		return fl, fl.Close, nil
	}
	if tr == nil {
		return nil, nil, errors.New("deploy: ledger: no ledger file and no connection for the job's ledger stream")
	}
	// A release waits out a cluster's leader election (4 to 9 s on
	// nats-server after a node dies) rather than failing the agent.
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{Timeout: bus.DefaultJSTimeout, Keys: LedgerKeys(ring)})
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: ledger: %w", err)
	}
	return l, func() error { return nil }, nil
}

// EnsureLedgerStream creates job's ledger stream with the connection of tr,
// which must be the aggregator's in a permissioned deployment (banks may
// bind to the stream but not define it; docs/DEPLOY.md, step 4).
func EnsureLedgerStream(ctx context.Context, tr *bus.NATSTransport, job string, replicas int) error {
	if _, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{Replicas: replicas}); err != nil {
		return fmt.Errorf("deploy: ledger stream of %s: %w", job, err)
	}
	return nil
}

// LedgerKeys is ring as the ledger readers' key verifier: nil (no
// signature required) without a keyring. A nil *bus.Keyring must not
// become a non-nil interface.
func LedgerKeys(ring *bus.Keyring) privacy.KeyVerifier {
	if ring == nil {
		return nil
	}
	return ring
}

// Gate builds client's privacy gate over ledger with p's δ, budget,
// accountant and noise seed, replaying the client's own verified chain:
// with a keyring only entries its key signed count, and with a signer
// every new entry is signed (Signing gives both). The gate outlives ctx's
// cancellation: ctx bounds only the replay.
func Gate(ctx context.Context, job, client string, p PrivacyOptions, ledger privacy.Ledger, clock func() time.Time,
	ring *bus.Keyring, signer *bus.Signer) (*privacy.Gate, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	kind, _ := p.accountant()
	cfg := privacy.Config{Job: job, Client: client, Delta: p.Delta, Budget: p.Budget(), Accountant: kind, Seed: p.NoiseSeed,
		Keys: LedgerKeys(ring)}
	if signer != nil {
		cfg.Signer = signer
	}
	g, err := privacy.NewGate(context.WithoutCancel(ctx), cfg, ledger, clock)
	if err != nil {
		return nil, fmt.Errorf("deploy: gate of %s: %w", client, err)
	}
	return g, nil
}

// logLedgerReading warns of every record the gate's start-up read of the
// ledger skipped or flagged: a restart goes on, and the operator learns
// what the audit will list (docs/DEPLOY.md, "Reading the ledger's
// rejected entries").
func logLedgerReading(log zerolog.Logger, rd privacy.Reading) {
	const most = 20 // one line each; the audit lists them all
	for i, r := range rd.Rejected {
		if i == most {
			log.Warn().Int("more", len(rd.Rejected)-most).Msg("ledger: more records skipped; run graphfed audit for the full list")
			break
		}
		log.Warn().Uint64("stream_seq", r.Pos).Str("where", r.Where).Str("reason", string(r.Reason)).
			Str("entry_client", r.Client).Uint64("entry_seq", r.Seq).Str("detail", r.Detail).
			Msg("ledger: record skipped (it counts for no budget)")
	}
	for i, b := range rd.Breaks {
		if i == most {
			log.Warn().Int("more", len(rd.Breaks)-most).Msg("ledger: more chain breaks; run graphfed audit for the full list")
			break
		}
		log.Warn().Uint64("stream_seq", b.Pos).Str("entry_client", b.Client).Uint64("entry_seq", b.Seq).
			Str("kind", string(b.Kind)).Str("detail", b.Detail).Msg("ledger: chain break (entry counted, flagged)")
	}
	if len(rd.Rejected) > 0 || len(rd.Breaks) > 0 {
		log.Warn().Int("records", rd.Records).Int("skipped", len(rd.Rejected)).Int("breaks", len(rd.Breaks)).
			Bool("signed", rd.Signed).Msg("ledger read with problems; the budget is rebuilt from this party's valid chain")
	}
}
