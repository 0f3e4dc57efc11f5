package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"graphfed/privacy"
)

// In the accounts layout (JobAccounts) the ledger lives in its own
// account, one stream per party. Need-to-know follows from the streams:
// a bank's imports reach its own stream's read API only, so it reads its
// own entries and nobody else's, while the auditor imports every stream's.
// A message get names its stream in the subject; a body that asks for
// another subject (next_by_subj) can still only read the stream the
// subject names.

// on is the stream holding client's entries.
func (l *JetStreamLedger) on(client string) (ledgerStream, error) {
	if ls, ok := l.streams[""]; ok {
		return ls, nil
	}
	if ls, ok := l.streams[client]; ok {
		return ls, nil
	}
	return ledgerStream{}, fmt.Errorf("%w: ledger of job %s opened for %s, not for client %s",
		privacy.ErrInvalid, l.job, strings.Join(l.order, ", "), client)
}

// openPartyLedgers binds l to the per-party streams of opts.Parties
// through the ledger account's imported API. Parties never create them.
func openPartyLedgers(ctx context.Context, nc *nats.Conn, l *JetStreamLedger, opts JSLedgerOptions) (*JetStreamLedger, error) {
	const op = "open"
	js, err := jetstream.NewWithAPIPrefix(nc, LedgerAPIPrefix)
	if err != nil {
		return nil, fmt.Errorf("bus: ledger %s: job %s: %w: %w", op, l.job, privacy.ErrLedger, err)
	}
	l.js = js
	l.name = LedgerPartyStreamName(l.job, "*")
	for _, party := range opts.Parties {
		if !ValidID(party) {
			return nil, fmt.Errorf("bus: ledger %s: %w: party %q does not match [a-z0-9-]{1,64}", op, privacy.ErrInvalid, party)
		}
		if _, dup := l.streams[party]; dup {
			continue
		}
		name := LedgerPartyStreamName(l.job, party)
		bctx, cancel := l.bound(ctx)
		st, err := js.Stream(bctx, name)
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return nil, fmt.Errorf("bus: ledger %s: %w: job %s has no ledger stream %s for %s (the ledger administrator creates them: graphfed keys ledger)",
				op, privacy.ErrLedger, l.job, name, party)
		case err != nil:
			return nil, fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, name, privacy.ErrLedger, err)
		}
		if err := checkLedgerStream(st.CachedInfo().Config, LedgerSubject(l.job, party), opts); err != nil {
			return nil, fmt.Errorf("bus: ledger %s: stream %s: %w", op, name, err)
		}
		l.streams[party] = ledgerStream{st: st, name: name}
		l.order = append(l.order, party)
	}
	return l, nil
}

// CreateLedgerStreams creates (or checks) the per-party ledger streams of
// job for parties, in the ledger account nc is logged in to: the ledger
// administrator's act, once, before the job starts (`graphfed keys
// ledger`, which refuses a party's seed). Each stream gets
// LedgerPartyLimits unless opts.Limits are given. It returns the streams'
// names.
// On a party's connection it would create them in the party's own
// account, where nobody reads them and where that party's appends would
// be acknowledged twice; the account cannot be asked which it is.
func CreateLedgerStreams(ctx context.Context, nc *nats.Conn, job string, parties []string, opts JSLedgerOptions) ([]string, error) {
	const op = "create"
	if !ValidID(job) {
		return nil, fmt.Errorf("bus: ledger %s: %w: job %q does not match [a-z0-9-]{1,64}", op, privacy.ErrInvalid, job)
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.Duplicates == 0 {
		opts.Duplicates = DefaultLedgerDuplicates
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultLedgerTimeout
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: ledger %s: job %s: %w: %w", op, job, privacy.ErrLedger, err)
	}
	banks := 0
	for _, p := range parties {
		if p != AggregatorID {
			banks++
		}
	}
	var names []string
	for _, party := range parties {
		if !ValidID(party) {
			return nil, fmt.Errorf("bus: ledger %s: %w: party %q does not match [a-z0-9-]{1,64}", op, privacy.ErrInvalid, party)
		}
		name, subj := LedgerPartyStreamName(job, party), LedgerSubject(job, party)
		popts := opts
		if popts.Limits == (LedgerLimits{}) {
			popts.Limits = LedgerPartyLimits(party, banks)
		}
		cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		st, err := js.CreateStream(cctx, appendOnlyConfig(name, "graphfed privacy ledger of "+party+" in job "+job+" (append-only)", subj, popts))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = js.Stream(cctx, name)
		}
		cancel()
		if err != nil {
			return nil, fmt.Errorf("bus: ledger %s: stream %s: %w: %w", op, name, privacy.ErrLedger, err)
		}
		if err := checkLedgerStream(st.CachedInfo().Config, subj, opts); err != nil {
			return nil, fmt.Errorf("bus: ledger %s: stream %s: %w", op, name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// AccountsLayout reports whether nc's account is one of the accounts
// layout's (JobAccounts): whether the ledger account's API for party's own
// ledger stream is imported there. On an open server, or one configured
// otherwise, nothing answers under LedgerAPIPrefix, and the request ends
// at once with no responders.
func AccountsLayout(ctx context.Context, nc *nats.Conn, job, party string) (bool, error) {
	if !ValidID(job) || !ValidID(party) {
		return false, fmt.Errorf("bus: accounts layout: job %q or party %q does not match [a-z0-9-]{1,64}", job, party)
	}
	ctx, cancel := bound(ctx, DefaultLedgerTimeout)
	defer cancel()
	_, err := nc.RequestWithContext(ctx, LedgerAPIPrefix+".STREAM.INFO."+LedgerPartyStreamName(job, party), nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, nats.ErrNoResponders):
		return false, nil
	}
	return false, fmt.Errorf("bus: accounts layout of %s in job %s: %w", party, job, err)
}
