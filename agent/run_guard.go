package agent

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"graphfed/bus"
)

// RunGuard keeps the aggregator's run an agent follows (bus.NewRunID) and
// refuses what any other run sent: a replayed done would stop the agent, a
// replayed round opening would make it train for a round that is not
// open, and the rounds of a second aggregator started for the job by
// mistake would pull it off the job's run, whose rounds and done it would
// then refuse: the job would hang.
//
// The agent follows exactly one run. It joins it with the hello reply (on
// its own inbox, in answer to its fresh request: Admitted). It switches to
// another run only on that run's signed word that the agent's run ended
// (a round opening or done that names it in Ended): the aggregator's run
// lease passes to a new run only after the holder released it or stopped
// renewing it (aggregator.AcquireLease), and a crash-recovered aggregator
// announces the run it took the job over from. A newer run id alone is
// not followed. With a keyring these envelopes are signed by the
// aggregator, so a successor cannot be forged; without one the guard stops
// plain replays only.
//
// RunGuard is safe for concurrent use: the driver's inbox peeks at a done
// before its turn (Agent.enqueue).
type RunGuard struct {
	mu    sync.Mutex
	run   string
	ended map[string]bool // runs the agent's runs announced as ended
}

// Run is the run the agent follows ("" before its join).
func (g *RunGuard) Run() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.run
}

// Admitted follows run, whose hello reply accepted the agent and which
// took the job over from the runs ended. A reply of a run known to have
// ended is refused as a replay (bus.ReasonReplay); a reply without a run
// (an aggregator that announces none) changes nothing.
func (g *RunGuard) Admitted(run string, ended []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case run == "":
		return nil
	case g.ended[run]:
		return &bus.RejectError{Reason: bus.ReasonReplay, Err: fmt.Errorf("hello reply of run %q, which ended", run)}
	}
	g.follow(run, ended)
	return nil
}

// follow makes run the agent's run; the caller holds mu.
func (g *RunGuard) follow(run string, ended []string) {
	if g.ended == nil {
		g.ended = map[string]bool{}
	}
	if g.run != "" && g.run != run {
		g.ended[g.run] = true
	}
	for _, r := range ended {
		g.ended[r] = true
	}
	g.run = run
}

// Check takes an opened body, or returns a reject: bus.ReasonReplay for a
// message of a run that ended or started before the agent's, or without
// a run, bus.ReasonOtherRun for one of a run that did not take the job
// over from the agent's. A round opening or done of the run that did is
// taken, and with adopt set that run becomes the agent's. Round openings
// before the agent joined any run pass without being adopted (the machine
// ignores them), and bodies that carry no run pass.
func (g *RunGuard) Check(body any, adopt bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var run, what string
	var ended []string
	switch b := body.(type) {
	case *bus.RoundOpen:
		run, ended, what = b.Run, b.Ended, fmt.Sprintf("round %d opening", b.Round)
		if g.run == "" {
			return nil
		}
	case *bus.Done:
		run, ended, what = b.Run, b.Ended, "done"
		if g.run == "" {
			return &bus.RejectError{Reason: bus.ReasonReplay, Err: errors.New("done before the agent joined any run")}
		}
	default:
		return nil
	}
	switch {
	case run == g.run:
		return nil
	case run != "" && !g.ended[run] && slices.Contains(ended, g.run):
		if adopt {
			g.follow(run, ended)
		}
		return nil
	case run == "" || g.ended[run] || !bus.RunLater(run, g.run):
		return &bus.RejectError{Reason: bus.ReasonReplay, Err: fmt.Errorf("%s of run %q, which is not the agent's run %q nor one that took the job over from it", what, run, g.run)}
	}
	return &bus.RejectError{Reason: bus.ReasonOtherRun,
		Err: fmt.Errorf("%s of run %q, which does not say that the agent's run %q ended: a second aggregator of the job? The agent goes on with its run", what, run, g.run)}
}
