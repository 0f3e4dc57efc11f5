package dsim

import (
	"context"
	"fmt"

	"graphfed/aggregator"
	"graphfed/privacy"
)

// The aggregator's ledger records, as the shipped Server keeps them
// (aggregator/records_server.go): a chain of its own in a ledger that
// survives its crashes, appended for every RecordRound before the actions
// after it are carried out, re-appended by a restarted aggregator whose
// checkpoint calls for a record its chain lacks, and named (Anchored) by
// every hello reply, round opening and done. The simulator records done
// when the machine finishes, with the heads of the banks' last updates
// (the Server waits for their final metrics first).

// aggRecords is the simulated aggregator's ledger and its gate.
type aggRecords struct {
	ledger *privacy.MemLedger // survives crashes, as the job's ledger does
	reader ledgerReader       // the simulator's reading of it, for the final audit
	gate   *privacy.Gate      // rebuilt from the ledger in every life
	anchor privacy.Ref
	last   *privacy.Entry
}

// open builds a life's gate over the ledger and reads its chain back.
func (r *aggRecords) open(s *sim) error {
	if r.ledger == nil {
		r.ledger = privacy.NewMemLedger()
	}
	g, err := privacy.NewGate(s.ctx, privacy.Config{Job: jobID, Client: privacy.AggregatorClient, Delta: 1e-5}, r.ledger, s.clock)
	if err != nil {
		return fmt.Errorf("aggregator records: %w", err)
	}
	own, err := g.Sync(s.ctx)
	if err != nil {
		return fmt.Errorf("aggregator records: %w", err)
	}
	r.gate, r.last, r.anchor = g, nil, g.Head()
	if n := len(own); n > 0 {
		r.last = &own[n-1]
	}
	return nil
}

// catchUp appends the record m's state calls for last if the chain lacks
// it (a crash between the checkpoint and the append), and the done record
// of a finished job that lacks it.
func (r *aggRecords) catchUp(s *sim, m *aggregator.Machine) error {
	want, ok := m.LastRecord()
	if !ok || r.last != nil && r.last.Channel == privacy.ChannelDone {
		return nil
	}
	if r.last == nil || r.last.Round < want.Round {
		s.tr.line(s.now, "ledger aggregator re-records round %d", want.Round)
		if err := r.round(s, want); err != nil {
			return err
		}
	}
	if m.Finished() {
		return r.done(s, m, want.Round)
	}
	return nil
}

func (r *aggRecords) round(s *sim, x aggregator.RecordRound) error {
	e, err := r.gate.RecordRound(s.ctx, x.Round, x.Heads)
	if err != nil {
		return fmt.Errorf("aggregator records: %w", err)
	}
	r.last, r.anchor = &e, r.gate.Head()
	s.tr.line(s.now, "ledger aggregator #%d round r%d heads %d", e.Seq, e.Round, len(e.Heads))
	return nil
}

func (r *aggRecords) done(s *sim, m *aggregator.Machine, rounds uint64) error {
	e, err := r.gate.RecordDone(s.ctx, rounds, m.Heads())
	if err != nil {
		return fmt.Errorf("aggregator records: %w", err)
	}
	r.last, r.anchor = &e, r.gate.Head()
	s.tr.line(s.now, "ledger aggregator #%d done r%d heads %d", e.Seq, e.Round, len(e.Heads))
	return nil
}

// ledgerWhole checks, after a finished run, that the job's whole ledger —
// the aggregator's chain and every bank's — shows no loss to an audit:
// every head a record names is in its bank's chain, every anchor names a
// record of the aggregator's, and the done record is there unless the
// aggregator ended down. The reading audited is the one an auditor makes
// of every party's records one after the other (readWhole), composed from
// the readings made along the run whenever that is exact (wholeReading).
func (s *sim) ledgerWhole() *Violation {
	parts := []*ledgerReader{&s.agg.rec.reader}
	ledgers := []*privacy.MemLedger{s.agg.rec.ledger}
	for _, id := range s.ids {
		parts, ledgers = append(parts, &s.agents[id].reader), append(ledgers, s.agents[id].ledger)
	}
	rd, ok, err := wholeReading(s.ctx, jobID, parts, ledgers)
	if err == nil && !ok {
		rd, err = readWhole(s.ctx, ledgers)
	}
	if err == nil {
		var rep privacy.Report
		if rep, err = privacy.AuditReading(rd, privacy.AuditOptions{Delta: 1e-5, Job: jobID}); err == nil {
			for _, j := range rep.Integrity.Completeness.Jobs {
				// An aggregator that crashed for good after the job's last
				// step never wrote its done record: the audit says so, and
				// that is no fault of the ledger's.
				if !j.Done && s.agg.up() {
					return violation(InvLedgerIncomplete, "the finished job's ledger holds no done record of the aggregator")
				}
				for _, f := range j.Findings {
					if f.Level == privacy.LevelEvidence {
						return violation(InvLedgerIncomplete, "%s", f.Text)
					}
				}
			}
			return nil
		}
	}
	s.err = fmt.Errorf("dsim seed %d: audit the ledger: %w", s.cfg.Seed, err)
	return nil
}

// readWhole reads the ledgers as one, as an auditor reads the job's
// ledger: every record copied into one ledger and verified there.
func readWhole(ctx context.Context, ledgers []*privacy.MemLedger) (privacy.Reading, error) {
	all := privacy.NewMemLedger()
	for _, l := range ledgers {
		recs, err := l.Records(ctx)
		if err != nil {
			return privacy.Reading{}, err
		}
		for _, r := range recs {
			all.AppendRaw(r.Data)
		}
	}
	return privacy.ReadLedger(ctx, all, privacy.VerifyOptions{Job: jobID})
}
