package aggregator

import (
	"fmt"
	"slices"
	"strings"

	"graphfed/privacy"
)

// The aggregator's ledger records (privacy/records.go says why): each
// bank reports its ledger head in its updates, the machine keeps the
// latest of each, and asks its driver to record them in the ledger —
// the start record before round 1 opens, a round record at every close,
// before the round's models go out — by the action RecordRound. The
// machine stays pure: the driver performs the append (durably, before it
// carries out the actions after it) and stamps the record it appended on
// the actions that announce it to the banks (Anchored), whose next
// entries countersign it. The done record, with every bank's final head
// (reported with its final metrics, after its last calibration), is the
// driver's too: the machine has finished by then.

// RecordRound asks the driver to append the aggregator's record of round
// Round's close (Round 0: the start record) with Heads, every bank's
// latest reported ledger head sorted by client, before it carries out the
// actions that follow it (the round's models, the next round's opening).
type RecordRound struct {
	Round uint64
	Heads []privacy.Head
}

func (RecordRound) isAction() {}

// noteHead keeps the ledger head a client reported if it is later than
// the one kept: a replayed or reordered update reports an older one.
func (m *Machine) noteHead(client string, r privacy.Ref) {
	if !r.Valid() {
		return
	}
	if h, ok := m.heads[client]; ok && h.Seq >= r.Seq {
		return
	}
	m.heads[client] = privacy.Head{Client: client, Seq: r.Seq, Digest: r.Digest}
}

// Heads is every client's latest reported ledger head, sorted by client.
func (m *Machine) Heads() []privacy.Head {
	out := make([]privacy.Head, 0, len(m.heads))
	for _, h := range m.heads {
		out = append(out, h)
	}
	privacy.SortHeads(out)
	return out
}

// record is the RecordRound of round r with the heads as they stand.
func (m *Machine) record(r uint64) RecordRound { return RecordRound{Round: r, Heads: m.Heads()} }

// LastRecord is the record the machine's state calls for last: that of
// its latest closed round, or the start record once round 1 opened; false
// before. A restarted driver compares it with the ledger: the append of a
// step whose checkpoint was stored may not have been, and it is made
// again before anything else goes out.
func (m *Machine) LastRecord() (RecordRound, bool) {
	switch {
	case m.closed > 0:
		// Rounds are closed in order, and the one closed last is the
		// open round's predecessor, or the last once finished.
		r := m.round
		if m.open {
			r--
		}
		return m.record(r), true
	case m.round > 0:
		return m.record(0), true
	}
	return RecordRound{}, false
}

// restoreHeads takes a snapshot's heads back: valid, sorted, each client
// once.
func (m *Machine) restoreHeads(hs []privacy.Head) error {
	if !slices.IsSortedFunc(hs, func(a, b privacy.Head) int { return strings.Compare(a.Client, b.Client) }) {
		return fmt.Errorf("ledger heads not sorted by client")
	}
	for _, h := range hs {
		if _, dup := m.heads[h.Client]; dup || !h.Ref().Valid() || h.Client == privacy.AggregatorClient {
			return fmt.Errorf("ledger head %+v: listed twice, or not a bank's entry", h)
		}
		m.heads[h.Client] = h
	}
	return nil
}

// Anchored is a with anchor, the aggregator's latest ledger record, set
// where a announces it to the banks (a join's answer, a round opening,
// done); other actions are returned as they are. Both drivers stamp their
// actions with it before turning them into messages (Outbound).
func Anchored(a Action, anchor privacy.Ref) Action {
	switch x := a.(type) {
	case ReplyJoin:
		x.Anchor = anchor
		return x
	case OpenRound:
		x.Anchor = anchor
		return x
	case Finished:
		x.Anchor = anchor
		return x
	}
	return a
}
