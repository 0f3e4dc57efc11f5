package agent

import (
	"time"

	"graphfed/bus"
)

// Observer sees every step of the agent's machine: the event, the actions
// it returned and how long the step took (a round's training and
// releases, for a round opening). A metrics recorder (the telemetry
// package) derives its counters from them, so that the machine stays free
// of I/O. It is called on the agent's goroutine before the actions are
// carried out; it must not block. Nil: none.
type Observer interface {
	Stepped(ev MachineEvent, acts []MachineAction, took time.Duration)
}

// Validator is the agent's validator: its reject counters by reason.
func (a *Agent) Validator() *bus.Validator { return a.ep.Validator() }
