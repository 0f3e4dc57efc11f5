package aggregator

import (
	"graphfed/bus"
	"graphfed/inbox"
)

// The server's queue of received messages, between the NATS delivery
// (which must never block: a blocked read loop gets the aggregator cut off
// by the server as a slow consumer) and the round loop. Before issue 14 it
// was one unbounded slice, so one bank flooding its own update subject
// grew the aggregator's memory without bound and queued its messages in
// front of everyone else's. Now each sender has its own bounded FIFO, the
// round loop serves the senders in turn, and a message that does not fit
// its sender's FIFO is dropped and counted against that sender: a flooding
// bank fills and loses only its own queue. The queue itself is package
// inbox, which every agent uses too (issue 29); what is the aggregator's
// own is its sizing and whom a message is charged to.

// InboxLimits bound the queue.
type InboxLimits = inbox.Limits

// InboxStats are one sender's counters.
type InboxStats = inbox.Stats

// Inbox is the bounded, per-sender fair queue of the server's messages.
// It is a plain data structure: the server guards it with its mutex.
type Inbox = inbox.Queue[queued]

// NewInbox returns an empty queue with limits lim, serving the senders in
// turn. No sender has an allowance of its own: every client is bounded
// alike, and all of them together by the total.
func NewInbox(lim InboxLimits) *Inbox { return inbox.New(lim, inbox.RoundRobin, msgSize) }

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
