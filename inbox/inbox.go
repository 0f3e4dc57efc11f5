// Package inbox is the bounded, per-sender fair queue that stands between
// a party's NATS delivery and its work loop, in the aggregator and in
// every agent.
//
// The delivery must never block (a blocked read loop gets the party cut
// off by the server as a slow consumer) and the work loop may be busy for
// a whole round, so what arrives meanwhile has to wait somewhere. One
// unbounded slice let a single bank grow the aggregator's memory without
// bound (issue 14) and, later, an agent's from 69 MB to 1.41 GB with 60
// signed embedding messages (issue 29). Here each sender has its own
// bounded FIFO, and a message that does not fit its sender's FIFO is
// dropped and counted against that sender: a flooding sender fills and
// loses only its own queue.
//
// The loop takes the messages in one of two orders (Order): the senders
// in turn, one message each (the aggregator, whose updates do not depend
// on each other, so that none waits behind a flooder's backlog), or in
// arrival order across senders (an agent, whose messages do: a bank must
// train a round with the embeddings that arrived before the round's
// opening, and not with those sent after it, which a turn-taking order
// would put first whenever the bank is busy). Either way the bound makes
// the wait behind a flooder's backlog at most its allowance.
//
// A sender's queue is limited by messages and bytes; the senders without
// an allowance of their own (Reserve) also share a total. A reserved
// sender's queue stands outside that total, so that the senders a party
// must hear (an agent's aggregator and neighbours) are never crowded out
// by others, however many of them flood.
package inbox

import "iter"

// Limits bound the queue.
type Limits struct {
	SenderMsgs  int // messages waiting per sender
	SenderBytes int // bytes waiting per sender
	// TotalBytes bounds the bytes waiting from every sender without an
	// allowance of its own, together.
	TotalBytes int
}

// Allowance is a reserved sender's own bound, outside Limits.TotalBytes.
type Allowance struct {
	Msgs, Bytes int
}

// Order is the order Pop serves the waiting messages in.
type Order int

const (
	// RoundRobin serves the senders with messages waiting in turn, one
	// message each.
	RoundRobin Order = iota
	// Arrival serves the messages in the order they were queued, across
	// senders.
	Arrival
)

// Stats are one sender's counters.
type Stats struct {
	Received     uint64 `json:"received"`
	Dropped      uint64 `json:"dropped"`
	DroppedBytes uint64 `json:"dropped_bytes"`
	// PeakBytes is the most bytes the sender ever had waiting: what its
	// traffic cost the party's memory at worst.
	PeakBytes int `json:"peak_bytes,omitempty"`
}

// Queue is the bounded, per-sender fair queue of items of type T. It is a
// plain data structure: its owner guards it with its own mutex.
type Queue[T any] struct {
	lim      Limits
	order    Order
	size     func(T) int
	reserved map[string]Allowance
	queues   map[string]*senderQueue[T]
	ring     []string // RoundRobin: senders with messages waiting, in service order
	next     int      // RoundRobin: the ring position served next
	arrivals []string // Arrival: the sender of every waiting message, oldest first
	shared   int      // bytes waiting from senders without an allowance
	bytes    int      // bytes waiting from every sender
	msgs     int      // messages waiting
	peak     int      // the most bytes ever waiting
	stats    map[string]*Stats
}

type senderQueue[T any] struct {
	items []T
	bytes int
}

// New returns an empty queue with limits lim, served in order; size is
// what an item counts for (its payload and subject, say).
func New[T any](lim Limits, order Order, size func(T) int) *Queue[T] {
	return &Queue[T]{lim: lim, order: order, size: size, reserved: map[string]Allowance{},
		queues: map[string]*senderQueue[T]{}, stats: map[string]*Stats{}}
}

// Reserve gives sender an allowance of its own, outside the shared total
// (what it has waiting leaves the total at once).
func (q *Queue[T]) Reserve(sender string, a Allowance) {
	if _, own := q.reserved[sender]; !own {
		if sq := q.queues[sender]; sq != nil {
			q.shared -= sq.bytes
		}
	}
	q.reserved[sender] = a
}

// Push queues item from sender. An item that would take its sender over
// its limits (its allowance, or SenderMsgs and SenderBytes), or the shared
// senders over TotalBytes, is dropped (the newest goes: what a sender
// queued first stays) unless mustKeep is set, for items whose source is
// itself bounded and which must not be lost (the aggregator's updates
// from the durable log, redelivered anyway). It returns whether item was
// queued and the sender's counters.
func (q *Queue[T]) Push(sender string, item T, mustKeep bool) (bool, Stats) {
	size := q.size(item)
	st := q.stats[sender]
	if st == nil {
		st = &Stats{}
		q.stats[sender] = st
	}
	st.Received++
	sq := q.queues[sender]
	if sq == nil {
		sq = &senderQueue[T]{}
		q.queues[sender] = sq
	}
	a, own := q.reserved[sender]
	if !own {
		a = Allowance{Msgs: q.lim.SenderMsgs, Bytes: q.lim.SenderBytes}
	}
	full := len(sq.items)+1 > a.Msgs || sq.bytes+size > a.Bytes || !own && q.shared+size > q.lim.TotalBytes
	if full && !mustKeep {
		if len(sq.items) == 0 {
			delete(q.queues, sender)
		}
		st.Dropped++
		st.DroppedBytes += uint64(size)
		return false, *st
	}
	if q.order == Arrival {
		q.arrivals = append(q.arrivals, sender)
	} else if len(sq.items) == 0 {
		q.ring = append(q.ring, sender)
	}
	sq.items = append(sq.items, item)
	sq.bytes += size
	q.bytes += size
	q.msgs++
	if !own {
		q.shared += size
	}
	st.PeakBytes = max(st.PeakBytes, sq.bytes)
	q.peak = max(q.peak, q.bytes)
	return true, *st
}

// Pop takes the next item in the queue's order.
func (q *Queue[T]) Pop() (T, bool) {
	var zero T
	var sender string
	switch {
	case q.order == Arrival && len(q.arrivals) > 0:
		sender = q.arrivals[0]
		q.arrivals[0] = ""
		q.arrivals = q.arrivals[1:]
	case q.order == Arrival, len(q.ring) == 0:
		return zero, false
	default:
		if q.next >= len(q.ring) {
			q.next = 0
		}
		sender = q.ring[q.next]
	}
	sq := q.queues[sender]
	item := sq.items[0]
	sq.items[0] = zero // the backing array must not keep a served payload alive
	sq.items = sq.items[1:]
	size := q.size(item)
	sq.bytes -= size
	q.bytes -= size
	q.msgs--
	if _, own := q.reserved[sender]; !own {
		q.shared -= size
	}
	switch {
	case len(sq.items) == 0:
		delete(q.queues, sender)
		if q.order == RoundRobin {
			q.ring = append(q.ring[:q.next], q.ring[q.next+1:]...)
		}
	case q.order == RoundRobin:
		q.next++
	}
	return item, true
}

// Queued iterates over sender's waiting items, oldest first, without
// taking them (an agent looks for a newer round among its aggregator's).
// The queue must not change during the iteration.
func (q *Queue[T]) Queued(sender string) iter.Seq[T] {
	return func(yield func(T) bool) {
		sq := q.queues[sender]
		if sq == nil {
			return
		}
		for _, it := range sq.items {
			if !yield(it) {
				return
			}
		}
	}
}

// Len is how many items wait.
func (q *Queue[T]) Len() int { return q.msgs }

// Bytes is how many bytes wait.
func (q *Queue[T]) Bytes() int { return q.bytes }

// PeakBytes is the most bytes that ever waited at once.
func (q *Queue[T]) PeakBytes() int { return q.peak }

// Bound is the most bytes the limits let wait at once, items that must be
// kept apart: the shared total and every allowance. Senders without an
// allowance are bounded together, so the bound does not grow with their
// number.
func (q *Queue[T]) Bound() int {
	n := q.lim.TotalBytes
	for _, a := range q.reserved {
		n += a.Bytes
	}
	return n
}

// Stats returns every sender's counters.
func (q *Queue[T]) Stats() map[string]Stats {
	out := make(map[string]Stats, len(q.stats))
	for s, st := range q.stats {
		out[s] = *st
	}
	return out
}
