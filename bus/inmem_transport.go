package bus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// InmemNetwork is an in-process message broker for tests: subjects with NATS
// wildcards, request/reply, and per-subscription ordered delivery. It is the
// double of a NATS server as InmemTransport is of NATSTransport.
type InmemNetwork struct {
	mu    sync.Mutex
	subs  map[*inmemSub]struct{}
	inbox atomic.Int64
}

// NewInmemNetwork returns an empty broker.
func NewInmemNetwork() *InmemNetwork {
	return &InmemNetwork{subs: map[*inmemSub]struct{}{}}
}

// Transport returns a new client of the broker.
func (n *InmemNetwork) Transport() *InmemTransport { return &InmemTransport{net: n} }

type inmemSub struct {
	net      *InmemNetwork
	patterns []string
	mu       sync.Mutex
	cond     *sync.Cond
	queue    []Msg
	closed   bool
}

func (s *inmemSub) matches(subject string) bool {
	for _, p := range s.patterns {
		if SubjectMatches(p, subject) {
			return true
		}
	}
	return false
}

func (s *inmemSub) push(m Msg) {
	s.mu.Lock()
	if !s.closed {
		s.queue = append(s.queue, m)
		s.cond.Signal()
	}
	s.mu.Unlock()
}

func (s *inmemSub) run(h Handler) {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		m := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		h(m)
	}
}

func (s *inmemSub) Unsubscribe() error {
	s.net.mu.Lock()
	delete(s.net.subs, s)
	s.net.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

func (n *InmemNetwork) deliver(m Msg) {
	n.mu.Lock()
	var targets []*inmemSub
	for s := range n.subs {
		if s.matches(m.Subject) {
			targets = append(targets, s)
		}
	}
	n.mu.Unlock()
	for _, s := range targets {
		// Each subscriber gets its own copy, as over a real network.
		c := m
		c.Data = append([]byte(nil), m.Data...)
		s.push(c)
	}
}

// InmemTransport is a Transport on an InmemNetwork.
type InmemTransport struct {
	net      *InmemNetwork
	messages atomic.Int64
	bytes    atomic.Int64
	closed   atomic.Bool
}

var _ Transport = (*InmemTransport)(nil)
var _ Transport = (*NATSTransport)(nil)

func (t *InmemTransport) count(data []byte) {
	t.messages.Add(1)
	t.bytes.Add(int64(len(data)))
}

// Publish implements Transport.
func (t *InmemTransport) Publish(ctx context.Context, subject string, data []byte) error {
	if t.closed.Load() {
		return fmt.Errorf("bus: publish %s: transport closed", subject)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t.count(data)
	t.net.deliver(Msg{Subject: subject, Data: data})
	return nil
}

// Subscribe implements Transport.
func (t *InmemTransport) Subscribe(h Handler, subjects ...string) (Subscription, error) {
	s := &inmemSub{net: t.net, patterns: subjects}
	s.cond = sync.NewCond(&s.mu)
	t.net.mu.Lock()
	t.net.subs[s] = struct{}{}
	t.net.mu.Unlock()
	go s.run(h)
	return s, nil
}

// Request implements Transport.
func (t *InmemTransport) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	inbox := fmt.Sprintf("_INBOX.%d", t.net.inbox.Add(1))
	ch := make(chan []byte, 1)
	sub, _ := t.Subscribe(func(m Msg) {
		select {
		case ch <- m.Data:
		default:
		}
	}, inbox)
	defer sub.Unsubscribe()
	t.count(data)
	t.net.deliver(Msg{Subject: subject, Reply: inbox, Data: data})
	select {
	case b := <-ch:
		return b, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("bus: request %s: %w", subject, ctx.Err())
	}
}

// Respond implements Transport.
func (t *InmemTransport) Respond(m Msg, data []byte) error {
	if m.Reply == "" {
		return fmt.Errorf("bus: respond on %s: no reply subject", m.Subject)
	}
	t.count(data)
	t.net.deliver(Msg{Subject: m.Reply, Data: data})
	return nil
}

// Flush implements Transport; delivery is immediate.
func (t *InmemTransport) Flush(context.Context) error { return nil }

// Stats implements Transport.
func (t *InmemTransport) Stats() (int64, int64) { return t.messages.Load(), t.bytes.Load() }

// Close implements Transport.
func (t *InmemTransport) Close() error { t.closed.Store(true); return nil }
