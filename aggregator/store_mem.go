package aggregator

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"graphfed/bus"
)

// MemStore is the in-memory double of a Store (bus.JetStreamCheckpointStore
// on NATS): it outlives the servers that use it, as a JetStream bucket
// outlives a killed aggregator. Safe for concurrent use.
type MemStore struct {
	mu     sync.Mutex
	state  []byte
	models map[uint64][]byte
	saves  int
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{models: map[uint64][]byte{}} }

// LoadState implements Store.
func (s *MemStore) LoadState(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.state), nil
}

// SaveState implements Store.
func (s *MemStore) SaveState(_ context.Context, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = slices.Clone(data)
	s.saves++
	return nil
}

// SaveModel implements Store.
func (s *MemStore) SaveModel(_ context.Context, r uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models[r] = slices.Clone(data)
	return nil
}

// LoadModel implements Store.
func (s *MemStore) LoadModel(_ context.Context, r uint64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.models[r]
	if !ok {
		return nil, fmt.Errorf("aggregator: mem store: no model of round %d", r)
	}
	return slices.Clone(b), nil
}

// Saves counts the state records written so far.
func (s *MemStore) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// MemUpdateLog is the in-memory double of an UpdateLog (a JetStream stream
// with the aggregator's durable consumer): it records every update
// published on a transport, whether or not a server is running, and
// delivers each to the current consumer until it is acknowledged. A new
// Consume, a restarted server's, gets every unacknowledged update again.
type MemUpdateLog struct {
	sub bus.Subscription

	mu        sync.Mutex
	cond      *sync.Cond
	msgs      []bus.Msg // position i+1
	acked     map[uint64]bool
	delivered map[uint64]uint64
	session   int // the current consumer; bumped by stop
}

// NewMemUpdateLog records the updates of job published on tr's network.
func NewMemUpdateLog(tr bus.Transport, job string) (*MemUpdateLog, error) {
	l := &MemUpdateLog{acked: map[uint64]bool{}, delivered: map[uint64]uint64{}}
	l.cond = sync.NewCond(&l.mu)
	sub, err := tr.Subscribe(l.record, bus.Subject(job, bus.KindUpdate, "*"))
	if err != nil {
		return nil, fmt.Errorf("aggregator: mem update log: %w", err)
	}
	l.sub = sub
	return l, nil
}

func (l *MemUpdateLog) record(m bus.Msg) {
	l.mu.Lock()
	l.msgs = append(l.msgs, bus.Msg{Subject: m.Subject, Data: m.Data})
	l.cond.Broadcast()
	l.mu.Unlock()
}

// Close stops recording.
func (l *MemUpdateLog) Close() error { return l.sub.Unsubscribe() }

// Len is the number of updates recorded.
func (l *MemUpdateLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// Consume implements UpdateLog: one consumer at a time, as the durable
// consumer has one aggregator.
func (l *MemUpdateLog) Consume(h func(bus.LoggedMsg), _ func(error)) (func(), error) {
	l.mu.Lock()
	l.session++
	me := l.session
	l.mu.Unlock()
	go func() {
		var next uint64 = 1
		for {
			l.mu.Lock()
			for l.session == me && int(next) > len(l.msgs) {
				l.cond.Wait()
			}
			if l.session != me {
				l.mu.Unlock()
				return
			}
			seq := next
			next++
			if l.acked[seq] {
				l.mu.Unlock()
				continue
			}
			l.delivered[seq]++
			lm := bus.LoggedMsg{Msg: l.msgs[seq-1], Seq: seq, Delivered: l.delivered[seq]}
			lm.Ack = func(context.Context) error {
				l.mu.Lock()
				l.acked[seq] = true
				l.mu.Unlock()
				return nil
			}
			l.mu.Unlock()
			h(lm)
		}
	}()
	stop := func() {
		l.mu.Lock()
		if l.session == me {
			l.session++
		}
		l.cond.Broadcast()
		l.mu.Unlock()
	}
	return stop, nil
}

// Get implements UpdateLog.
func (l *MemUpdateLog) Get(_ context.Context, seq uint64) (bus.Msg, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq == 0 || int(seq) > len(l.msgs) {
		return bus.Msg{}, fmt.Errorf("aggregator: mem update log: no update at %d", seq)
	}
	return l.msgs[seq-1], nil
}
