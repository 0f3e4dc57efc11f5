package dsim

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"graphfed/bus"
)

// The simulator's event queue and network. Events are ordered by simulated
// time and, at equal times, by the order they were scheduled in, so the
// run is a function of the seed alone.

type evKind uint8

const (
	evDeliver   evKind = iota // a message reaches its destination
	evTimer                   // a party asked to be woken (deadline, hello retry)
	evCrash                   // a party crashes
	evRestart                 // a party boots, or comes back after a crash
	evPartition               // the network splits
	evHeal                    // the network heals
)

type simEvent struct {
	at      time.Time
	seq     uint64
	kind    evKind
	node    string
	msg     simMsg
	midStep bool            // evCrash: strike in the middle of the next step
	cut     map[string]bool // evPartition: the parties on one side
}

type eventQueue []simEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// simMsg is a message in flight: envelope bytes as its sender's
// bus.Endpoint sealed them, on a subject (or, for the answer to a hello,
// on the recipient's inbox). Kind, round and seq are for the trace.
type simMsg struct {
	from, to string
	idx      uint64 // position among the messages sent on its link
	subject  string
	data     []byte
	reply    bool // the answer to to's hello
	kind     bus.Kind
	round    uint64
	seq      uint64
	// flood names the kind of a flood message (flood.go); "" for honest
	// traffic.
	flood string
}

type link struct{ from, to string }

// simNet injects the network faults into every send and keeps the
// per-link order needed to count reorderings.
type simNet struct {
	rng      *rand.Rand
	faults   Faults
	slow     time.Duration // latency above which a message counts as delayed
	sent     map[link]uint64
	seen     map[link]uint64 // highest index delivered per link
	cut      map[string]bool // one side of the current partition; nil: none
	counters *Counters
}

// fates decides when the copies of one message arrive: none (dropped), one,
// or two (duplicated), each with its own latency.
func (n *simNet) fates(now time.Time) []time.Time {
	f := n.faults
	n.counters.Sent++
	if f.Drop > 0 && n.rng.Float64() < f.Drop {
		n.counters.Dropped++
		return nil
	}
	copies := 1
	if f.Dup > 0 && n.rng.Float64() < f.Dup {
		n.counters.Duplicated++
		copies = 2
	}
	out := make([]time.Time, copies)
	for i := range out {
		d := f.Latency
		if f.Jitter > 0 {
			d += time.Duration(n.rng.Int64N(int64(f.Jitter)))
		}
		if f.Reorder > 0 && f.ReorderBy > 0 && n.rng.Float64() < f.Reorder {
			d += time.Duration(n.rng.Int64N(int64(f.ReorderBy)))
		}
		if d > n.slow {
			n.counters.Delayed++
		}
		out[i] = now.Add(d)
	}
	return out
}

// stamp numbers a message on its link.
func (n *simNet) stamp(m *simMsg) {
	l := link{m.from, m.to}
	n.sent[l]++
	m.idx = n.sent[l]
}

// admit decides at delivery time whether the message gets through the
// current partition, and counts overtaking.
func (n *simNet) admit(m simMsg) bool {
	if n.cut != nil && n.cut[m.from] != n.cut[m.to] {
		n.counters.PartitionDrops++
		return false
	}
	l := link{m.from, m.to}
	if m.idx < n.seen[l] {
		n.counters.Reordered++
	} else {
		n.seen[l] = m.idx
	}
	return true
}

// push schedules an event; seq breaks ties in scheduling order.
func (s *sim) push(e simEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.queue, e)
}

// send puts a message on the network with its faults.
func (s *sim) send(m simMsg) {
	s.net.stamp(&m)
	fates := s.net.fates(s.now)
	if s.tr.on() {
		switch len(fates) {
		case 0:
			s.tr.line(s.now, "lost   %s (network)", msgText(m))
		case 1:
			s.tr.line(s.now, "send   %s", msgText(m))
		default:
			s.tr.line(s.now, "send   %s (duplicated)", msgText(m))
		}
	}
	for _, at := range fates {
		s.push(simEvent{at: at, kind: evDeliver, node: m.to, msg: m})
	}
}

// scheduleFaults draws every crash and partition of the run up front,
// each with its restart or heal. A job on a healthy network closes its
// rounds at quorum within a few latencies, one that meets faults at its
// deadlines: half the faults strike within the first horizon, half within
// the second, so that both kinds of job meet them.
func (s *sim) scheduleFaults() {
	f := s.cfg.Faults
	fast := int64(s.cfg.Rounds) * int64(min(s.cfg.RoundTimeout, 4*(f.Latency+f.Jitter+f.ReorderBy)))
	slow := int64(s.cfg.horizon())
	when := func() time.Time {
		if s.rng.IntN(2) == 0 {
			return s.now.Add(time.Duration(s.rng.Int64N(max(fast, 1))))
		}
		return s.now.Add(time.Duration(s.rng.Int64N(slow)))
	}
	outage := func() time.Duration {
		return s.cfg.RoundTimeout/4 + time.Duration(s.rng.Int64N(int64(f.MaxOutage)))
	}
	for range f.AgentCrashes {
		at := when()
		id := s.ids[s.rng.IntN(len(s.ids))]
		s.push(simEvent{at: at, kind: evCrash, node: id, midStep: s.rng.Float64() < f.MidStep})
		s.push(simEvent{at: at.Add(outage()), kind: evRestart, node: id})
	}
	for range f.AggCrashes {
		at := when()
		s.push(simEvent{at: at, kind: evCrash, node: aggID, midStep: s.rng.Float64() < f.MidStep})
		s.push(simEvent{at: at.Add(outage()), kind: evRestart, node: aggID})
	}
	all := append([]string{aggID}, s.ids...)
	for range f.Partitions {
		at := when()
		cut := map[string]bool{}
		for len(cut) == 0 || len(cut) == len(all) {
			clear(cut)
			for _, id := range all {
				if s.rng.IntN(2) == 0 {
					cut[id] = true
				}
			}
		}
		s.push(simEvent{at: at, kind: evPartition, cut: cut})
		s.push(simEvent{at: at.Add(outage()), kind: evHeal})
	}
}
