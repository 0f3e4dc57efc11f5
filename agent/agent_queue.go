package agent

import (
	"context"
	"time"

	"graphfed/bus"
)

// The driver's inbox (inbox.go): the transport's callbacks enqueue, Run
// dequeues, so that a round's training never blocks delivery, and a bank
// that fell behind can see that newer rounds are waiting.

// enqueue queues m under its sender, or drops it when the sender's queue
// is full. The aggregator's notice that it stopped the job is acted on
// here, whatever becomes of m in the queue.
func (a *Agent) enqueue(m bus.Msg) {
	stop, isStop := a.stopNotice(m)
	sender := a.senderOf(m.Subject)
	a.mu.Lock()
	ok, st := a.inbox.Push(sender, m, false)
	waiting, bytes := a.inbox.Len(), a.inbox.Bytes()
	if isStop && a.interrupt != nil {
		a.interrupt(stop)
	}
	a.mu.Unlock()
	if !ok {
		a.logDrop(sender, m, st, waiting, bytes)
		return
	}
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

// nextOrWake pops the next queued message, waiting for one; or it returns
// woke when the machine's NextWake comes first once it has joined (a
// secure round's share wait).
func (a *Agent) nextOrWake(ctx context.Context) (bus.Msg, bool, error) {
	for {
		a.mu.Lock()
		m, ok := a.inbox.Pop()
		a.mu.Unlock()
		if ok {
			return m, false, nil
		}
		var wake <-chan time.Time
		var t *time.Timer
		if w := a.m.NextWake(); a.joined && !w.IsZero() {
			t = time.NewTimer(max(w.Sub(a.cfg.Now()), 0))
			wake = t.C
		}
		woke := false
		select {
		case <-ctx.Done():
		case <-a.notify:
		case <-wake:
			woke = true
		}
		if t != nil {
			t.Stop()
		}
		switch {
		case woke:
			return bus.Msg{}, true, nil
		case ctx.Err() != nil:
			return bus.Msg{}, false, ctx.Err()
		}
	}
}

// newerRoundQueued reports whether a round after r has opened while the
// agent was busy. Round openings are queued under the aggregator
// (senderOf), so only its queue is looked at.
func (a *Agent) newerRoundQueued(r uint64) bool {
	subj := bus.Subject(a.cfg.Job, bus.KindRound)
	a.mu.Lock()
	defer a.mu.Unlock()
	for m := range a.inbox.Queued(bus.AggregatorID) {
		if m.Subject != subj {
			continue
		}
		// Only the aggregator's rounds count: a forged newer round would
		// otherwise make the agent skip the real one. The validator checks
		// them again when their turn comes.
		env, err := bus.Open(m.Data)
		if err != nil || env.Kind != bus.KindRound || env.Round <= r || env.Job != a.cfg.Job || env.From != bus.AggregatorID {
			continue
		}
		if k := a.ep.Keyring(); k != nil && k.Verify(&env) != nil {
			continue
		}
		// Nor a round of an earlier run, replayed.
		var ro bus.RoundOpen
		if env.UnmarshalBody(&ro) == nil && a.runs.Check(&ro, false) == nil {
			return true
		}
	}
	return false
}

// slowWait is the extra time a SlowFactor-times slower bank would have
// needed for work that took took.
func (a *Agent) slowWait(took time.Duration) time.Duration {
	if a.cfg.SlowFactor <= 1 {
		return 0
	}
	return time.Duration(float64(took) * (a.cfg.SlowFactor - 1))
}

// sleep waits out a slow bank's delay once per step, before its first
// publication.
func (a *Agent) sleep(ctx context.Context, d *time.Duration) error {
	if *d <= 0 {
		return nil
	}
	t := time.NewTimer(*d)
	defer t.Stop()
	*d = 0
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
