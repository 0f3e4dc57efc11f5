package telemetry

import (
	"context"
	"time"

	"graphfed/privacy"
)

// ledger decorates a privacy.Ledger: every append is counted by channel
// and result and timed; reads pass through untouched.
type ledger struct {
	privacy.Ledger
	m     *Metrics
	party string
}

// Ledger wraps l so that party's appends are counted and timed. The
// wrapper is a privacy.Ledger like any other: the gate sees no
// difference.
func (m *Metrics) Ledger(party string, l privacy.Ledger) privacy.Ledger {
	return &ledger{Ledger: l, m: m, party: party}
}

// Append implements privacy.Ledger.
func (l *ledger) Append(ctx context.Context, e privacy.Entry) error {
	start := time.Now()
	err := l.Ledger.Append(ctx, e)
	l.m.ledgerTime.WithLabelValues(l.party).Observe(time.Since(start).Seconds())
	result := "ok"
	if err != nil {
		result = "error"
	}
	l.m.ledgerAppend.WithLabelValues(l.party, string(e.Channel), result).Inc()
	return err
}

// LedgerRetried counts one repeat of party's append of an entry of
// channel ch after a transient failure (bus.LedgerRetry.OnRetry).
func (m *Metrics) LedgerRetried(party string, ch privacy.Channel) {
	m.ledgerRetries.WithLabelValues(party, string(ch)).Inc()
}
