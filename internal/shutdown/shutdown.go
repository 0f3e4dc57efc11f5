// Package shutdown turns the signals that ask a process to stop into
// context cancellation, so a command stops the way a cancelled library
// call does and the cause says which signal it was.
package shutdown

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// OnSignal is a child of parent that ends on the first SIGINT or SIGTERM
// with "received SIGINT" (or SIGTERM) as its cause, which the aggregator
// passes on to the agents as its stop reason. After the first signal the
// handler is gone, so a second one kills the process the default way.
// stop releases the handler and the context.
func OnSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(fmt.Errorf("received %s", signalName(s)))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
