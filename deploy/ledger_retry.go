package deploy

import (
	"hash/fnv"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/telemetry"
)

// retryAppends wraps an agent's ledger l in a bus.RetryLedger (where the
// retry lives and why: bus/ledger_retry.go): a ledger append that fails
// transiently is repeated with jittered backoff within the round's
// deadline before the agent gives the release up. inner is the ledger
// that judges which failures are transient (the JetStream ledger knows
// its closed connection); l may be inner decorated with metrics, so that
// every attempt counts in graphfed_ledger_appends_total. Retries are
// logged on log and counted in m (nil: not counted). The jitter is seeded
// from the job and party, so that parties retrying at once spread out.
func retryAppends(l, inner privacy.Ledger, job, party string, now func() time.Time, log zerolog.Logger, m *telemetry.Metrics) (privacy.Ledger, error) {
	h := fnv.New64a()
	h.Write([]byte(job + "/" + party))
	cfg := bus.LedgerRetry{Now: now, Seed: h.Sum64(), Log: log}
	if t, ok := inner.(interface{ Transient(error) bool }); ok {
		cfg.Transient = t.Transient
	}
	if m != nil {
		cfg.OnRetry = func(e privacy.Entry, _ int, _ error) { m.LedgerRetried(party, e.Channel) }
	}
	return bus.NewRetryLedger(l, cfg)
}
