package aggregator

import (
	"context"
	"fmt"
	"sync"

	"graphfed/bus"
	"graphfed/privacy"
)

// recordState is what the server keeps of its ledger records
// (records.go): the latest record appended, which the announcements name,
// and the final heads the banks reported with their final metrics.
type recordState struct {
	mu     sync.Mutex
	anchor privacy.Ref // the latest record of the aggregator's chain
	// last is the latest record's channel and round (read back from the
	// chain at the start, then appended): what a restarted server checks
	// its machine's last record against.
	last    *privacy.Entry
	final   map[string]privacy.Ref // final heads by client
	doneRef privacy.Ref            // the done record, once appended
	heads   []privacy.Head         // the done record's heads
}

func (s *Server) records() bool { return s.cfg.Ledger != nil }

// startRecords reads the aggregator's own chain back and appends the
// record its machine calls for last if the chain does not hold it: a
// step's checkpoint may have been stored and its record not (a crash
// between the two), and nothing the step announced may go out again
// before it is. Called by Run before anything is announced.
func (s *Server) startRecords(ctx context.Context) error {
	if !s.records() {
		return nil
	}
	const op = "aggregator: ledger records"
	own, err := s.cfg.Ledger.Sync(ctx)
	if err != nil {
		return fmt.Errorf("%s: reading the aggregator's chain: %w", op, err)
	}
	st := &s.rec
	st.mu.Lock()
	if n := len(own); n > 0 {
		e := own[n-1]
		st.last, st.anchor = &e, s.cfg.Ledger.Head()
		if e.Channel == privacy.ChannelDone {
			st.doneRef, st.heads = st.anchor, e.Heads
		}
	}
	st.mu.Unlock()
	want, ok := s.machine.LastRecord()
	done := st.last != nil && st.last.Channel == privacy.ChannelDone
	have := st.last != nil && st.last.Channel == privacy.ChannelRound && st.last.Round >= want.Round
	if !ok || done || have {
		return nil
	}
	s.cfg.Log.Info().Uint64("round", want.Round).Msg("ledger: appending the round record the checkpoint calls for and the ledger lacks")
	return s.appendRecord(ctx, want)
}

// appendRecord appends a round record and makes it the anchor the next
// announcements name.
func (s *Server) appendRecord(ctx context.Context, r RecordRound) error {
	if !s.records() {
		return nil
	}
	// A run whose lease lapsed writes nothing: the job may be another
	// run's by now (recovery_fence.go).
	if err := s.leaseHeld(); err != nil {
		return err
	}
	e, err := s.cfg.Ledger.RecordRound(ctx, r.Round, r.Heads)
	if err != nil {
		return fmt.Errorf("aggregator: ledger record of round %d: %w", r.Round, err)
	}
	s.rec.mu.Lock()
	s.rec.last, s.rec.anchor = &e, s.cfg.Ledger.Head()
	s.rec.mu.Unlock()
	s.cfg.Log.Debug().Uint64("round", r.Round).Uint64("seq", e.Seq).Int("heads", len(r.Heads)).Msg("ledger: round recorded")
	return nil
}

// anchor is the record the announcements name (zero without records).
func (s *Server) anchor() privacy.Ref {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	return s.rec.anchor
}

// noteFinalHead keeps the final ledger head a client reported with its
// final metrics.
func (s *Server) noteFinalHead(client string, l *bus.LedgerRef) {
	r := l.Ref()
	if !r.Valid() {
		return
	}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if s.rec.final == nil {
		s.rec.final = map[string]privacy.Ref{}
	}
	if old, ok := s.rec.final[client]; !ok || r.Seq > old.Seq {
		s.rec.final[client] = r
	}
}

// recordDone appends the done record once the job is over and the final
// metrics are in (or the wait for them ended): every bank's final head,
// from its final metrics where it sent them, else the latest its updates
// reported. A done record in the chain already (a resumed server of a
// finished job) is not appended again.
func (s *Server) recordDone(ctx context.Context) error {
	if !s.records() {
		return nil
	}
	st := &s.rec
	st.mu.Lock()
	if !st.doneRef.IsZero() {
		st.mu.Unlock()
		return nil
	}
	heads := map[string]privacy.Head{}
	for _, h := range s.machine.Heads() {
		heads[h.Client] = h
	}
	for c, r := range st.final {
		if h, ok := heads[c]; !ok || r.Seq > h.Seq {
			heads[c] = privacy.Head{Client: c, Seq: r.Seq, Digest: r.Digest}
		}
	}
	st.mu.Unlock()
	hs := make([]privacy.Head, 0, len(heads))
	for _, h := range heads {
		hs = append(hs, h)
	}
	privacy.SortHeads(hs)
	if err := s.leaseHeld(); err != nil {
		return err
	}
	rounds := s.machine.closed
	e, err := s.cfg.Ledger.RecordDone(ctx, rounds, hs)
	if err != nil {
		return fmt.Errorf("aggregator: ledger done record after %d rounds: %w", rounds, err)
	}
	st.mu.Lock()
	st.last, st.anchor, st.doneRef, st.heads = &e, s.cfg.Ledger.Head(), s.cfg.Ledger.Head(), e.Heads
	st.mu.Unlock()
	s.cfg.Log.Info().Uint64("rounds", rounds).Uint64("seq", e.Seq).Int("heads", len(hs)).Msg("ledger: done recorded")
	return nil
}

// finalHeads are the heads the done record names and the aggregator's
// own, its done record: what an audit should expect (the JSON report's
// ledger_heads). Nil before the done record.
func (s *Server) finalHeads() []privacy.Head {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if s.rec.doneRef.IsZero() {
		return nil
	}
	out := append([]privacy.Head(nil), s.rec.heads...)
	out = append(out, privacy.Head{Client: privacy.AggregatorClient, Seq: s.rec.doneRef.Seq, Digest: s.rec.doneRef.Digest})
	privacy.SortHeads(out)
	return out
}
