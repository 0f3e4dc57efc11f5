package bus

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// BoundedSubscriber is a transport whose subscriptions bound what the
// client library queues for them (NATSTransport). The aggregator
// subscribes so: a flood on one subject then costs at most the limits,
// counted as slow-consumer drops, instead of growing without bound.
type BoundedSubscriber interface {
	// SubscribeBounded delivers messages on any of subjects to h,
	// serially, each subject's in arrival order, with lim pending at most
	// per subject; h must return quickly (hand work off). The
	// subscription's Dropped method counts what the limits dropped.
	SubscribeBounded(h Handler, lim PendingLimits, subjects ...string) (BoundedSubscription, error)
	// MaxPayload is the server's payload limit, as it announced it.
	MaxPayload() int64
}

// BoundedSubscription is a subscription with pending limits.
type BoundedSubscription interface {
	Subscription
	// Dropped is how many messages the limits dropped so far.
	Dropped() int
}

// boundedSub is one async nats.go subscription per subject.
type boundedSub struct {
	subs []*nats.Subscription
}

func (s *boundedSub) Unsubscribe() error {
	var first error
	for _, sub := range s.subs {
		if err := sub.Unsubscribe(); err != nil && first == nil && err != nats.ErrConnectionClosed {
			first = err
		}
	}
	return first
}

func (s *boundedSub) Dropped() int {
	n := 0
	for _, sub := range s.subs {
		if d, err := sub.Dropped(); err == nil {
			n += d
		}
	}
	return n
}

// SubscribeBounded implements BoundedSubscriber. nats.go cannot bound a
// channel subscription's bytes (ChanSubscribe, which Subscribe uses to
// keep the order across subjects), so each subject gets its own async
// subscription with SetPendingLimits, and a mutex makes their deliveries
// serial. The order across subjects is then the order in which their
// deliveries reach the mutex, not strictly the connection's.
func (t *NATSTransport) SubscribeBounded(h Handler, lim PendingLimits, subjects ...string) (BoundedSubscription, error) {
	if lim.Msgs <= 0 || lim.Bytes <= 0 {
		return nil, fmt.Errorf("bus: subscribe bounded: limits %+v must be positive", lim)
	}
	s := &boundedSub{}
	var mu sync.Mutex
	deliver := func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		t.byKind.add(DirectionReceived, m.Subject, len(m.Data))
		h(Msg{Subject: m.Subject, Reply: m.Reply, Data: m.Data})
	}
	for _, subj := range subjects {
		sub, err := t.nc.Subscribe(subj, deliver)
		if err == nil {
			err = sub.SetPendingLimits(lim.Msgs, lim.Bytes)
		}
		if err != nil {
			if sub != nil {
				sub.Unsubscribe()
			}
			s.Unsubscribe()
			return nil, fmt.Errorf("bus: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	return s, nil
}

// MaxPayload implements BoundedSubscriber.
func (t *NATSTransport) MaxPayload() int64 { return t.nc.MaxPayload() }
