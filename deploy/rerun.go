package deploy

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// Re-running a job id would add a second run's releases to the same
// privacy ledger: every bank's ε would grow without anyone having asked
// for more rounds, and the agents, which rebuild their released rounds
// from the ledger, would take the new run's rounds for ones they trained.
// So an aggregator refuses a job that left state on the server (ledger
// entries, a durable checkpoint) unless told to continue it (Resume);
// continuing needs a durable checkpoint, which carries the rounds and
// model on, and states the budgets the banks have spent so far.

// ErrRerun is the refusal to run a job id that ran before without Resume.
var ErrRerun = errors.New("the job ran before")

// PriorRun is what earlier runs of a job left on its server.
type PriorRun struct {
	Stream        string // the ledger stream's name
	LedgerEntries uint64 // messages in it (0: none, or no stream)
	Checkpoint    bool   // a durable aggregator's checkpoint exists
}

// Any says the job ran before.
func (p PriorRun) Any() bool { return p.LedgerEntries > 0 || p.Checkpoint }

func (p PriorRun) String() string {
	s := fmt.Sprintf("%d entries in its privacy ledger (stream %s)", p.LedgerEntries, p.Stream)
	if p.Checkpoint {
		s += " and a durable checkpoint"
	}
	return s
}

// Carried is a bank's privacy spending carried over into a resumed job:
// what its ledger entries of the earlier runs account for (RDP at
// DefaultDelta over the model, grad and margin releases composed; the
// audit has the per-channel and per-node figures).
type Carried struct {
	Client   string  `json:"client"`
	Releases uint64  `json:"releases"`
	Epsilon  float64 `json:"epsilon"`
}

// findPriorRun looks for job's ledger entries that verify (against ring
// when set) and, with store, for its checkpoint. Only verified entries
// count: junk stored on a ledger subject before the start must not burn
// the job id. In the accounts layout the aggregator reads only its own
// ledger stream, whose records (start, rounds, done) say whether it ran:
// the banks' entries are theirs and the auditor's to read.
func findPriorRun(ctx context.Context, tr *bus.NATSTransport, job string, accounts bool, ring *bus.Keyring, store aggregator.Store) (PriorRun, error) {
	opts := bus.JSLedgerOptions{ReadOnly: true}
	p := PriorRun{Stream: bus.LedgerStreamName(job)}
	if accounts {
		opts.Parties = []string{bus.AggregatorID}
		p.Stream = bus.LedgerPartyStreamName(job, bus.AggregatorID)
	}
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, opts)
	switch {
	case !accounts && (errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrJetStreamNotEnabled)):
		return p, findCheckpoint(ctx, &p, store)
	case err != nil:
		return p, fmt.Errorf("looking for an earlier run: %w", err)
	}
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{Keys: LedgerKeys(ring), Job: job})
	if err != nil {
		return p, fmt.Errorf("looking for an earlier run: %w", err)
	}
	p.LedgerEntries = uint64(len(rd.Entries))
	return p, findCheckpoint(ctx, &p, store)
}

// findCheckpoint sets p.Checkpoint when store holds a checkpoint.
func findCheckpoint(ctx context.Context, p *PriorRun, store aggregator.Store) error {
	if store == nil {
		return nil
	}
	data, err := store.LoadState(ctx)
	if err != nil {
		return fmt.Errorf("looking for an earlier run: checkpoint: %w", err)
	}
	p.Checkpoint = data != nil
	return nil
}

// checkRerun applies the rule above: nil to go on.
func checkRerun(job string, p PriorRun, resume, durable bool) error {
	switch {
	case !p.Any():
		return nil
	case !resume:
		return fmt.Errorf("%w: job %s has %s; running it again would add to the same budgets. "+
			"Pass --resume to continue it (the banks' spent budgets carry over), or choose a new job id", ErrRerun, job, p)
	case !durable || !p.Checkpoint:
		return fmt.Errorf("%w: job %s has %s but no durable checkpoint to continue from (--resume continues a job run with --durable); choose a new job id",
			ErrRerun, job, p)
	}
	return nil
}

// carriedBudgets reads job's ledger stream and accounts each bank's
// releases so far. A ledger that cannot be read or accounted is reported
// as an error; the resumed job goes on (the banks' own gates hold the
// budgets).
func carriedBudgets(ctx context.Context, tr *bus.NATSTransport, job string) ([]Carried, error) {
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	es, err := l.Entries(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := privacy.Audit(es, privacy.AuditOptions{Kind: privacy.RDP, Delta: DefaultDelta, Job: job})
	if err != nil {
		return nil, err
	}
	out := make([]Carried, 0, len(rep.Clients))
	for _, c := range rep.Clients {
		out = append(out, Carried{Client: c.Client, Releases: c.Releases, Epsilon: c.Epsilon})
	}
	return out, nil
}
