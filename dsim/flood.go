package dsim

import (
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
)

// floodKinds are the messages a flooding party sends with each update, by
// the reason the aggregator must drop them for ("replay": none required;
// a replay may count in place of its original, never beside it, which the
// counted-twice invariant checks).
func floodKinds() []string { return []string{"replay", "shape", "future", "unknown_client"} }

// floodStranger is the name the flood forges: a client that never joined.
const floodStranger = "bank-99"

// flood sends cfg.Flood messages of every kind after one of from's updates.
// Latencies come from the flood's own stream, and the network's faults are
// skipped, so that the unflooded run's random draws are not disturbed. They
// exceed any honest latency, so that on a healthy network the original
// update always arrives before its replays, but not by much, so that the
// flood arrives while the job runs.
func (s *sim) flood(from string, u bus.Update) {
	f := s.cfg.Faults
	honest := f.Latency + f.Jitter + f.ReorderBy + time.Millisecond // the longest honest latency, and then some
	for _, kind := range floodKinds() {
		for range s.cfg.Flood {
			m := simMsg{from: from, to: aggID}
			b := updateMsg{u: u, flood: kind}
			switch kind {
			case "shape":
				b.u.Withheld, b.forged = false, []float32{0} // no job has a one-parameter model
			case "future":
				b.u.Round += 1 << 40
			case "unknown_client":
				m.from = floodStranger
			}
			m.body = b
			s.net.stamp(&m)
			d := honest + time.Duration(s.floodRng.Int64N(int64(2*honest)))
			s.push(simEvent{at: s.now.Add(d), kind: evDeliver, node: aggID, msg: m})
		}
	}
}

// checkFlood checks that a flood message the aggregator just stepped on was
// dropped for its own reason.
func (s *sim) checkFlood(from string, b updateMsg) *Violation {
	if b.flood == "" {
		return nil
	}
	s.counters.Flooded++
	if b.flood == "replay" {
		return nil
	}
	for _, a := range s.lastAgg {
		if d, ok := a.(aggregator.Dropped); ok && d.Client == from && d.Round == b.u.Round {
			if d.Reason == b.flood {
				return nil
			}
			return violation(InvNotRejected, "%s's %s flood message for round %d dropped as %q", from, b.flood, b.u.Round, d.Reason)
		}
	}
	return violation(InvNotRejected, "%s's %s flood message for round %d was not dropped", from, b.flood, b.u.Round)
}
