package agent

import (
	"errors"
	"fmt"
	"sync"

	"graphfed/bus"
)

// RunGuard keeps the aggregator's run an agent belongs to (bus.NewRunID)
// and refuses what an earlier run sent: a replayed done would stop the
// agent, a replayed round opening would make it train for a round that is
// not open. The run is learnt from the hello reply (on the agent's own
// inbox, in answer to its fresh request) and from round openings of a
// later run (a durable aggregator that restarted announces its new run).
// A done is taken only from the run the agent knows or a later one. With
// a keyring these envelopes are signed by the aggregator, so a later run
// cannot be forged; without one the guard stops plain replays only.
//
// RunGuard is safe for concurrent use: the driver's inbox peeks at a done
// before its turn (Agent.enqueue).
type RunGuard struct {
	mu  sync.Mutex
	run string
}

// Run is the run the agent knows ("" before its join).
func (g *RunGuard) Run() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.run
}

// Heard adopts run when it is later than the one known (a hello reply).
func (g *RunGuard) Heard(run string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if bus.RunLater(run, g.run) {
		g.run = run
	}
}

// Check takes an opened body, or returns a bus.ReasonReplay reject. A
// round opening of a later run is adopted (adopt set); bodies that carry
// no run pass.
func (g *RunGuard) Check(body any, adopt bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var run, what string
	switch b := body.(type) {
	case *bus.RoundOpen:
		run, what = b.Run, fmt.Sprintf("round %d opening", b.Round)
	case *bus.Done:
		run, what = b.Run, "done"
		if g.run == "" {
			return &bus.RejectError{Reason: bus.ReasonReplay, Err: errors.New("done before the agent joined any run")}
		}
	default:
		return nil
	}
	switch {
	case run == g.run:
		return nil
	case bus.RunLater(run, g.run):
		if adopt {
			g.run = run
		}
		return nil
	}
	return &bus.RejectError{Reason: bus.ReasonReplay, Err: fmt.Errorf("%s of run %q, not of the agent's run %q or a later one", what, run, g.run)}
}
