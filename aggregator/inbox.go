package aggregator

import "graphfed/bus"

// The server's queue of received messages, between the NATS delivery
// (which must never block: a blocked read loop gets the aggregator cut off
// by the server as a slow consumer) and the round loop. Before issue 14 it
// was one unbounded slice, so one bank flooding its own update subject
// grew the aggregator's memory without bound and queued its messages in
// front of everyone else's. Now each sender has its own bounded FIFO, the
// round loop serves the senders in turn, and a message that does not fit
// its sender's FIFO is dropped and counted against that sender: a flooding
// bank fills and loses only its own queue.

// InboxLimits bound the queue.
type InboxLimits struct {
	SenderMsgs  int // messages waiting per sender
	SenderBytes int // bytes waiting per sender
	TotalBytes  int // bytes waiting from all senders together
}

// InboxLimitsFor are the limits for a server payload limit and a job of
// clients clients: every sender may have a round of its legitimate
// traffic waiting (a hello, an update of at most maxPayload, metrics, a
// bye) with room to spare, 16 messages and two full payloads (with 64 KiB
// for their subjects), and the whole queue as much for every client and two
// more senders.
func InboxLimitsFor(maxPayload, clients int) InboxLimits {
	per := 2*maxPayload + 64<<10
	return InboxLimits{SenderMsgs: 16, SenderBytes: per, TotalBytes: per * (max(clients, 1) + 2)}
}

// InboxStats are one sender's counters.
type InboxStats struct {
	Received     uint64 `json:"received"`
	Dropped      uint64 `json:"dropped"`
	DroppedBytes uint64 `json:"dropped_bytes"`
}

// Inbox is the bounded, per-sender fair queue. It is a plain data
// structure: the server guards it with its mutex.
type Inbox struct {
	lim    InboxLimits
	queues map[string]*senderQueue
	ring   []string // senders with messages waiting, in service order
	next   int      // the ring position served next
	bytes  int
	stats  map[string]*InboxStats
}

type senderQueue struct {
	items []queued
	bytes int
}

// NewInbox returns an empty queue with limits lim.
func NewInbox(lim InboxLimits) *Inbox {
	return &Inbox{lim: lim, queues: map[string]*senderQueue{}, stats: map[string]*InboxStats{}}
}

// Push queues q from sender. A message that would take its
// sender over SenderMsgs or SenderBytes, or the queue over TotalBytes, is
// dropped (the newest goes: what a sender queued first stays) unless
// mustKeep is set, for messages whose source is itself bounded and which
// must not be lost (updates from the durable log, redelivered anyway).
// It returns whether q was queued and the sender's counters.
func (b *Inbox) Push(sender string, q queued, mustKeep bool) (bool, InboxStats) {
	size := msgSize(q)
	st := b.stats[sender]
	if st == nil {
		st = &InboxStats{}
		b.stats[sender] = st
	}
	st.Received++
	sq := b.queues[sender]
	if sq == nil {
		sq = &senderQueue{}
		b.queues[sender] = sq
	}
	full := len(sq.items)+1 > b.lim.SenderMsgs || sq.bytes+size > b.lim.SenderBytes || b.bytes+size > b.lim.TotalBytes
	if full && !mustKeep {
		st.Dropped++
		st.DroppedBytes += uint64(size)
		return false, *st
	}
	if len(sq.items) == 0 {
		b.ring = append(b.ring, sender)
	}
	sq.items = append(sq.items, q)
	sq.bytes += size
	b.bytes += size
	return true, *st
}

// Pop takes the next message, serving the senders with messages waiting
// in turn, one message each.
func (b *Inbox) Pop() (queued, bool) {
	if len(b.ring) == 0 {
		return queued{}, false
	}
	if b.next >= len(b.ring) {
		b.next = 0
	}
	sender := b.ring[b.next]
	sq := b.queues[sender]
	q := sq.items[0]
	sq.items[0] = queued{}
	sq.items = sq.items[1:]
	size := msgSize(q)
	sq.bytes -= size
	b.bytes -= size
	if len(sq.items) == 0 {
		delete(b.queues, sender)
		b.ring = append(b.ring[:b.next], b.ring[b.next+1:]...)
	} else {
		b.next++
	}
	return q, true
}

// Len is how many messages wait.
func (b *Inbox) Len() int {
	n := 0
	for _, sq := range b.queues {
		n += len(sq.items)
	}
	return n
}

// Bytes is how many bytes wait.
func (b *Inbox) Bytes() int { return b.bytes }

// Stats returns every sender's counters.
func (b *Inbox) Stats() map[string]InboxStats {
	out := make(map[string]InboxStats, len(b.stats))
	for s, st := range b.stats {
		out[s] = *st
	}
	return out
}

// msgSize is what a queued message counts for.
func msgSize(q queued) int { return len(q.msg.Data) + len(q.msg.Subject) + len(q.msg.Reply) }

// senderOf is the sender a message is queued under: the <from> token of
// its subject, which the server's permissions tie to the sender's key.
// A subject without one is queued under itself.
func senderOf(subject string) string {
	if p, err := bus.ParseSubject(subject); err == nil && p.From != "" {
		return p.From
	}
	return "?" + subject
}
