package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"graphfed/bus"
	"graphfed/privacy"
)

// Ledger opens the privacy ledger p names for job: the file at
// p.LedgerPath, or else the job's JetStream ledger stream on tr's
// connection (created if missing and the party may create it). The
// returned close releases a file ledger; the stream needs none.
func Ledger(ctx context.Context, job string, p PrivacyOptions, tr *bus.NATSTransport) (privacy.Ledger, func() error, error) {
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
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{Timeout: bus.DefaultJSTimeout})
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

// Gate builds client's privacy gate over ledger with p's δ, budget,
// accountant and noise seed, replaying the client's earlier entries. The
// gate outlives ctx's cancellation: ctx bounds only the replay.
func Gate(ctx context.Context, job, client string, p PrivacyOptions, ledger privacy.Ledger, clock func() time.Time) (*privacy.Gate, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	kind, _ := p.accountant()
	g, err := privacy.NewGate(context.WithoutCancel(ctx), privacy.Config{Job: job, Client: client, Delta: p.Delta,
		Budget: p.Budget(), Accountant: kind, Seed: p.NoiseSeed}, ledger, clock)
	if err != nil {
		return nil, fmt.Errorf("deploy: gate of %s: %w", client, err)
	}
	return g, nil
}
