package operator

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"graphfed/bus"
)

// The ledger administrator creates one stream per party of the keyring on
// a server running the generated configuration; a party's seed, another
// job and an unreachable server are refused.
func TestCreateLedgerStreams(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if _, err := WriteKeys(keysConfig(keys, []string{"bank-0", "bank-1"}, nil), time.Now()); err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerOptions{ConfigFile: filepath.Join(keys, "server.conf"), Port: -1,
		StoreDir: filepath.Join(t.TempDir(), "js")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	cfg := DefaultLedgerConfig()
	cfg.NATS, cfg.Keyring, cfg.Creds = srv.ClientURL(), filepath.Join(keys, "keyring.json"), filepath.Join(keys, bus.LedgerAdminID+".nk")
	for _, tc := range []struct {
		name   string
		change func(*LedgerConfig)
		want   string
	}{
		{"a party's seed", func(c *LedgerConfig) { c.Creds = filepath.Join(keys, "aggregator.nk") }, "a party of the job"},
		{"another job", func(c *LedgerConfig) { c.Job = "other" }, "is the keyring of job aml-1"},
		{"no keyring", func(c *LedgerConfig) { c.Keyring = filepath.Join(keys, "missing.json") }, "missing.json"},
		{"unreachable", func(c *LedgerConfig) { c.NATS = "nats://127.0.0.1:1" }, "no server reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.change(&c)
			if _, err := CreateLedgerStreams(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasPrefix(err.Error(), "keys ledger: ") {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	r, err := CreateLedgerStreams(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The aggregator's round records and each bank's releases.
	if r.Job != "aml-1" || len(r.Streams) != 3 || r.Replicas != 1 {
		t.Fatalf("result %+v", r)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || b.String() != "ledger of job aml-1 ready: 3 streams (1 replicas), one per party\n" {
		t.Fatalf("text %q, %v", b.String(), err)
	}
}
