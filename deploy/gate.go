package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

// Ledger opens party's privacy ledger p names for job: the file at
// p.LedgerPath, or else the job's JetStream ledger on tr's connection.
// With a keyring the job runs in the accounts layout (bus.JobAccounts):
// the ledger is party's own stream in the ledger account, which the
// ledger administrator created, and the writer finds its chain head among
// the entries its key signed. Without one it is the job's single stream,
// created if missing. The returned close releases a file ledger; the
// stream needs none.
func Ledger(ctx context.Context, job, party string, p PrivacyOptions, tr *bus.NATSTransport, ring *bus.Keyring) (privacy.Ledger, func() error, error) {
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
	opts := bus.JSLedgerOptions{Timeout: bus.DefaultJSTimeout, Keys: LedgerKeys(ring)}
	accounts, err := accountsLayout(ctx, tr.Conn(), job, party)
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: ledger: %w", err)
	}
	if accounts {
		opts.Parties = []string{party}
	}
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: ledger: %w", err)
	}
	// The party's chain head is read now, before its first round, not
	// inside that round's deadline.
	if err := l.Prepare(ctx, party); err != nil {
		return nil, nil, fmt.Errorf("deploy: ledger: %w", err)
	}
	return l, func() error { return nil }, nil
}

// accountsLayout says whether party runs in the accounts layout that
// `graphfed keys` configures (bus.JobAccounts): every party in an account
// of its own, the ledger in the ledger account. The server says so: the
// ledger's API is imported into the party's account, or nothing answers
// there. The auditor asks about the aggregator's stream, whose API it
// imports too.
func accountsLayout(ctx context.Context, nc *nats.Conn, job, party string) (bool, error) {
	if party == bus.AuditorID {
		party = bus.AggregatorID
	}
	return bus.AccountsLayout(ctx, nc, job, party)
}

// ledgerParties are the parties whose ledger streams the accounts layout
// holds for ring's job: the aggregator (its round records) and every bank.
func ledgerParties(ring *bus.Keyring) []string {
	return append([]string{bus.AggregatorID}, ring.Banks()...)
}

// OpenAuditLedger opens job's whole ledger for reading as the auditor (or
// anyone else on an open server) on nc: every party's stream in the
// accounts layout (ring set), the single stream otherwise.
func OpenAuditLedger(ctx context.Context, nc *nats.Conn, job string, ring *bus.Keyring) (*bus.JetStreamLedger, error) {
	opts := bus.JSLedgerOptions{ReadOnly: true}
	accounts, err := accountsLayout(ctx, nc, job, bus.AuditorID)
	if err != nil {
		return nil, fmt.Errorf("deploy: ledger of %s: %w", job, err)
	}
	if accounts {
		if ring == nil {
			return nil, fmt.Errorf("deploy: ledger of %s: one stream per party on this server, and without the keyring the parties are unknown (--keyring)", job)
		}
		opts.Parties = ledgerParties(ring)
	}
	l, err := bus.OpenJetStreamLedger(ctx, nc, job, opts)
	if err != nil {
		return nil, fmt.Errorf("deploy: ledger of %s: %w", job, err)
	}
	return l, nil
}

// CreateLedgerStreams is the ledger administrator's setup of ring's job on
// nc (logged in to the ledger account): one append-only stream per party.
func CreateLedgerStreams(ctx context.Context, nc *nats.Conn, ring *bus.Keyring, replicas int) ([]string, error) {
	names, err := bus.CreateLedgerStreams(ctx, nc, ring.Job(), ledgerParties(ring), bus.JSLedgerOptions{Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("deploy: ledger streams of %s: %w", ring.Job(), err)
	}
	return names, nil
}

// EnsureLedgerStream creates job's single ledger stream on an open server
// with the connection of tr. In the accounts layout no party may create a
// ledger stream: the ledger administrator does (CreateLedgerStreams).
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
