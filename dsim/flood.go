package dsim

import (
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
)

// floodKinds are the messages a flooding party sends with each update, by
// kind: exact replays of its envelope, updates of the wrong shape, for a
// round far beyond the job, and under the name of a client that never
// joined. A replay may count in place of its original, never beside it
// (the counted-twice invariant checks); the others must be refused for
// their own reason, by the aggregator's validator or by its machine.
func floodKinds() []string { return []string{"replay", "shape", "future", "unknown_client"} }

// floodReasons are the reasons a kind of flood message may be refused
// for, the validator's and the machine's; false for honest traffic and
// replays.
func floodReasons(kind string) ([2]string, bool) {
	switch kind {
	case "shape":
		return [2]string{bus.ReasonShape, "shape"}, true
	case "future":
		return [2]string{bus.ReasonRound, "future"}, true
	case "unknown_client":
		return [2]string{bus.ReasonSender, "unknown_client"}, true
	}
	return [2]string{}, false
}

// floodStranger is the name the flood forges: a client that never joined.
const floodStranger = "bank-99"

// forgedUpdate is an update as a hostile party writes it: the wire form
// of bus.Update with parameters no privacy gate released.
type forgedUpdate struct {
	Round  uint64     `msgpack:"round"`
	Base   uint64     `msgpack:"base"`
	Weight float64    `msgpack:"weight"`
	Params bus.Vector `msgpack:"params"`
}

// flood sends cfg.Flood messages of every kind after one of from's updates
// (data is its envelope). Latencies come from the flood's own stream, and
// the network's faults are skipped, so that the unflooded run's random
// draws are not disturbed; forged envelopes are sealed by endpoints of
// their own, so that from's sequence numbers are not either. Latencies
// exceed any honest latency, so that on a healthy network the original
// update always arrives before its replays, but not by much, so that the
// flood arrives while the job runs.
func (s *sim) flood(from string, u bus.Update, data []byte) {
	f := s.cfg.Faults
	honest := f.Latency + f.Jitter + f.ReorderBy + time.Millisecond // the longest honest latency, and then some
	forger := func(id string) *bus.Endpoint {
		ep, _ := bus.NewEndpoint(bus.EndpointConfig{Job: jobID, ID: id, Now: s.clock}, nil) // valid ids
		return ep
	}
	self, stranger := forger(from), forger(floodStranger)
	for _, kind := range floodKinds() {
		for range s.cfg.Flood {
			m := simMsg{from: from, to: aggID, subject: bus.Subject(jobID, bus.KindUpdate, from), kind: bus.KindUpdate, round: u.Round, flood: kind}
			var err error
			switch kind {
			case "replay":
				m.data = data
			case "shape":
				// No job has a one-parameter model.
				m.data, err = self.Seal(bus.KindUpdate, u.Round, &forgedUpdate{Round: u.Round, Base: u.BaseRound, Weight: u.Weight, Params: bus.Vector{0}})
			case "future":
				fu := u
				fu.Round += 1 << 40
				m.round = fu.Round
				m.data, err = self.Seal(bus.KindUpdate, fu.Round, &fu)
			case "unknown_client":
				m.from, m.subject = floodStranger, bus.Subject(jobID, bus.KindUpdate, floodStranger)
				m.data, err = stranger.Seal(bus.KindUpdate, u.Round, &u)
			}
			if err != nil {
				continue // a body that does not encode is no flood
			}
			s.net.stamp(&m)
			d := honest + time.Duration(s.floodRng.Int64N(int64(2*honest)))
			s.tr.line(s.now, "flood  %s", msgText(m))
			s.push(simEvent{at: s.now.Add(d), kind: evDeliver, node: aggID, msg: m})
		}
	}
}

// checkFlood checks what became of a flood message at the aggregator: the
// reason its validator refused it for (reason), or, when it passed, the
// machine's actions on it (acts).
func checkFlood(m simMsg, reason string, acts []aggregator.Action) *Violation {
	want, forged := floodReasons(m.flood)
	if !forged {
		return nil // honest traffic, or a replay
	}
	if reason != "" {
		if reason != want[0] {
			return violation(InvNotRejected, "%s's %s flood message for round %d refused as %q, want %q", m.from, m.flood, m.round, reason, want[0])
		}
		return nil
	}
	for _, a := range acts {
		if d, ok := a.(aggregator.Dropped); ok && d.Client == m.from && d.Round == m.round {
			if d.Reason == want[1] {
				return nil
			}
			return violation(InvNotRejected, "%s's %s flood message for round %d dropped as %q", m.from, m.flood, m.round, d.Reason)
		}
	}
	return violation(InvNotRejected, "%s's %s flood message for round %d was neither refused nor dropped", m.from, m.flood, m.round)
}
