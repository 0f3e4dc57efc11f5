package agent

import (
	"context"

	"graphfed/bus"
)

// stepContext is the context the driver steps the machine under for ev:
// a round opening carries the round's deadline to the ledger
// (bus.WithAppendDeadline), so that a ledger append that fails
// transiently is repeated (bus.RetryLedger) only while the round is
// open, before the agent gives the release up. The deadline bounds the
// retries only: ctx itself does not end with it, and the machine, which
// only passes ctx on to its gate, stays free of clocks.
func stepContext(ctx context.Context, ev MachineEvent) context.Context {
	if ro, ok := ev.(RoundOpened); ok && ro.Deadline.UnixNano() > 0 {
		return bus.WithAppendDeadline(ctx, ro.Deadline)
	}
	return ctx
}
