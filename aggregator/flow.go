package aggregator

import (
	"math/bits"

	"graphfed/bus"
)

// The server's flow limits: what NATS may queue for its subscription (a
// backstop, counted as slow-consumer drops) and what its own inbox holds
// per sender (the flow control, counted per sender). Both derive from the
// server's payload limit, which `graphfed keys` sizes from the job's model
// schema: the server announces it to every client.

// flowLimits are a server's limits, defaults filled in.
type flowLimits struct {
	payload int64
	pending bus.PendingLimits
	inbox   InboxLimits
}

// FlowReport is what the flow limits did in a run.
type FlowReport struct {
	// Senders are the inbox's counters by sender (the <from> token of the
	// subject): messages received and dropped because the sender's queue
	// was full.
	Senders map[string]InboxStats `json:"senders,omitempty"`
	// PendingDropped counts messages the client library dropped because
	// the subscription's pending limits were reached (slow consumer).
	PendingDropped int `json:"pending_dropped"`
	// Conn are the aggregator connection's events (deploy fills them in).
	Conn bus.ConnCounts `json:"conn"`
}

// InboxDropped is how many messages the inbox dropped from all senders.
func (f FlowReport) InboxDropped() uint64 {
	var n uint64
	for _, st := range f.Senders {
		n += st.Dropped
	}
	return n
}

// flowFor fills in cfg's limits: from the transport's payload limit when
// it knows it (NATS), else DefaultMaxPayload; the job's clients are the
// enrolled ones, or at least its minimum.
func flowFor(cfg ServerConfig, tr bus.Transport) flowLimits {
	f := flowLimits{payload: bus.DefaultMaxPayload, pending: cfg.Pending, inbox: cfg.Inbox}
	if bs, ok := tr.(bus.BoundedSubscriber); ok && bs.MaxPayload() > 0 {
		f.payload = bs.MaxPayload()
	}
	clients := max(len(cfg.Enrol), cfg.Round.MinClients, 1)
	if f.pending.Msgs <= 0 || f.pending.Bytes <= 0 {
		f.pending = bus.AggregatorPending(int(f.payload), clients)
	}
	if f.inbox.SenderMsgs <= 0 || f.inbox.SenderBytes <= 0 || f.inbox.TotalBytes <= 0 {
		f.inbox = InboxLimitsFor(int(f.payload), clients)
	}
	return f
}

// subscribe subscribes the server to subjects, with pending limits where
// the transport has them.
func (s *Server) subscribe(subjects []string) (bus.Subscription, error) {
	if bs, ok := s.tr.(bus.BoundedSubscriber); ok {
		sub, err := bs.SubscribeBounded(s.enqueue, s.flow.pending, subjects...)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.sub = sub
		s.mu.Unlock()
		return sub, nil
	}
	return s.tr.Subscribe(s.enqueue, subjects...)
}

// logDrop logs a message the inbox dropped: the first drop of a sender,
// then at each power of two, so that a flood of any length costs a
// logarithmic number of lines while the counters count every drop.
func (s *Server) logDrop(sender string, m bus.Msg, st InboxStats, waiting, bytes int) {
	if bits.OnesCount64(st.Dropped) != 1 {
		return
	}
	s.cfg.Log.Warn().Str("sender", sender).Str("subject", m.Subject).Int("bytes", len(m.Data)).
		Uint64("dropped", st.Dropped).Uint64("received", st.Received).Uint64("dropped_bytes", st.DroppedBytes).
		Int("queued_msgs", waiting).Int("queued_bytes", bytes).
		Int("sender_limit_msgs", s.flow.inbox.SenderMsgs).Int("sender_limit_bytes", s.flow.inbox.SenderBytes).
		Msg("inbox full for this sender: message dropped (counted per sender; other senders unaffected)")
}

// flowReport is the flow counters so far; s.mu is held.
func (s *Server) flowReport() FlowReport {
	f := FlowReport{Senders: s.inbox.Stats()}
	if bs, ok := s.sub.(bus.BoundedSubscription); ok {
		f.PendingDropped = bs.Dropped()
	}
	return f
}

// InboxStats are the inbox's counters so far, by sender.
func (s *Server) InboxStats() map[string]InboxStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inbox.Stats()
}
