package telemetry

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
)

func TestLiveStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addr  string
		serve bool
		error bool
	}{
		{"off", "", false, false},
		{"free port", "127.0.0.1:0", true, false},
		{"bad address", "127.0.0.1:-1", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, stop, err := Live{Addr: tc.addr}.Start(context.Background(), zerolog.Nop())
			if (err != nil) != tc.error {
				t.Fatalf("Start: %v", err)
			}
			if err != nil {
				return
			}
			defer stop()
			if (m != nil) != tc.serve {
				t.Errorf("metrics %v, want served %v", m, tc.serve)
			}
		})
	}
}

// Deferred serves nothing until start is called; stop is safe either way.
func TestLiveDeferred(t *testing.T) {
	for _, started := range []bool{false, true} {
		start, stop := Live{Addr: "127.0.0.1:0"}.Deferred(context.Background(), zerolog.Nop())
		if started {
			if m, err := start(); err != nil || m == nil {
				t.Fatalf("start: %v, %v", m, err)
			}
		}
		stop()
	}
}
