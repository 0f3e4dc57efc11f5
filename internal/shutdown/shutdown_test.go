package shutdown

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestOnSignalCancelsWithTheSignal(t *testing.T) {
	ctx, stop := OnSignal(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not end the context")
	}
	if got := context.Cause(ctx).Error(); got != "received SIGTERM" {
		t.Errorf("cause %q, want received SIGTERM", got)
	}
}

func TestStopEndsWithoutASignal(t *testing.T) {
	ctx, stop := OnSignal(context.Background())
	stop()
	if ctx.Err() == nil {
		t.Fatal("stop left the context running")
	}
	if context.Cause(ctx) != context.Canceled {
		t.Errorf("cause %v, want context.Canceled", context.Cause(ctx))
	}
}

func TestSignalName(t *testing.T) {
	for s, want := range map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"} {
		if got := signalName(s); got != want {
			t.Errorf("signalName(%v) = %s, want %s", s, got, want)
		}
	}
}
