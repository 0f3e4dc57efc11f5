package aggregator

import (
	"fmt"
	"time"

	"graphfed/bus"
)

// HelloGuard refuses replayed hellos. A hello cannot carry the run id (the
// client says hello before it heard of the run), so it is bound to the run
// by its signed send time instead: a hello sent before the run began (less
// the allowed clock skew) belongs to an earlier run, and a hello not newer
// than the last one taken from its client in this run is a copy of one
// already handled. Either would otherwise be taken for a rejoin. With a
// keyring the send time is signed; without one anybody can forge a fresh
// hello, and the guard only stops plain replays.
//
// A HelloGuard is used by its server's goroutine only.
type HelloGuard struct {
	start time.Time
	skew  time.Duration
	last  map[string]helloMark
}

type helloMark struct{ time, seq uint64 }

// DefaultHelloSkew is the clock difference allowed between an agent's
// machine and the aggregator's when a hello's send time is compared with
// the run's start.
const DefaultHelloSkew = 10 * time.Second

// NewHelloGuard returns the guard of a run started at start, allowing skew
// between the clocks (negative: none).
func NewHelloGuard(start time.Time, skew time.Duration) *HelloGuard {
	return &HelloGuard{start: start, skew: max(skew, 0), last: map[string]helloMark{}}
}

// Check takes the hello envelope env or returns a bus.ReasonReplay reject.
// A taken hello becomes its client's latest.
func (g *HelloGuard) Check(env bus.Envelope) error {
	sent := env.SentAt()
	if sent.Before(g.start.Add(-g.skew)) {
		return &bus.RejectError{Reason: bus.ReasonReplay,
			Err: fmt.Errorf("hello from %s sent at %s, before this run began at %s", env.From, sent.UTC().Format(time.RFC3339Nano), g.start.UTC().Format(time.RFC3339Nano))}
	}
	m := helloMark{uint64(env.Time), env.Seq}
	if prev, ok := g.last[env.From]; ok && (m.time < prev.time || m.time == prev.time && m.seq <= prev.seq) {
		return &bus.RejectError{Reason: bus.ReasonReplay,
			Err: fmt.Errorf("hello from %s (seq %d) is not newer than its last one (seq %d)", env.From, env.Seq, prev.seq)}
	}
	g.last[env.From] = m
	return nil
}
