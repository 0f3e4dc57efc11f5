package operator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// RunServer says how to make logins when refused; otherwise it writes the
// client URL and runs until its context ends.
func TestRunServer(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open.conf")
	if err := os.WriteFile(open, []byte("port: 4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		insecure bool
		metrics  string
		err      string
		out      string
	}{
		{name: "no logins", err: "graphfed keys --job"},
		{name: "insecure, metrics", insecure: true, metrics: "127.0.0.1:0", out: "nats-server listening on nats://"},
		{name: "bad metrics address", insecure: true, metrics: "127.0.0.1:-1", err: "--metrics-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultServerConfig()
			cfg.ConfigFile, cfg.Insecure, cfg.Port, cfg.StoreDir = open, tc.insecure, -1, filepath.Join(t.TempDir(), "js")
			cfg.Metrics.Addr = tc.metrics
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var out strings.Builder
			err := RunServer(ctx, cfg, &out, zerolog.Nop())
			if (err != nil) != (tc.err != "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("wrote %q, want %q", out.String(), tc.out)
			}
		})
	}
}
