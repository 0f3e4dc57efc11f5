package operator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestDefaultStoreDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if d, err := DefaultStoreDir(); err != nil || d != "/var/state/graphfed/jetstream" {
		t.Fatalf("with XDG_STATE_HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative") // ignored, as the XDG spec says
	t.Setenv("HOME", "/home/x")
	if d, err := DefaultStoreDir(); err != nil || d != "/home/x/.local/state/graphfed/jetstream" {
		t.Fatalf("without: %q, %v", d, err)
	}
}

// A configuration without logins is refused unless Insecure; the
// generated one starts authenticated, and Serve returns at the context's
// end.
func TestStartServer(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open.conf")
	if err := os.WriteFile(open, []byte("port: 4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys")
	if _, err := WriteKeys(keysConfig(keys, []string{"bank-0"}, nil), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		config   string
		insecure bool
		auth     bool
		refused  bool
	}{
		{"open", open, false, false, true},
		{"open, insecure", open, true, false, false},
		{"generated", filepath.Join(keys, "server.conf"), false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultServerConfig()
			cfg.ConfigFile, cfg.Insecure, cfg.Port, cfg.StoreDir = tc.config, tc.insecure, -1, filepath.Join(t.TempDir(), "js")
			srv, err := StartServer(cfg, zerolog.Nop())
			var noLogins *NoLoginsError
			if tc.refused {
				if !errors.As(err, &noLogins) || noLogins.ConfigFile != open {
					t.Fatalf("error %v, want a NoLoginsError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			if srv.Authenticated() != tc.auth || srv.StoreDir() != cfg.StoreDir {
				t.Fatalf("auth %v, store %s", srv.Authenticated(), srv.StoreDir())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			Serve(ctx, srv, cfg, zerolog.Nop())
		})
	}
}
