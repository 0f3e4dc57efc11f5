package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// server, aggregator and agent refuse to run without credentials, before
// touching the network, with an error that says how to make them; with
// --insecure they go on (and fail further on, here for want of a server
// or data).
func TestRefusesWithoutCredentials(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open.conf")
	if err := os.WriteFile(open, []byte("port: 4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"aggregator", "--nats", "nats://127.0.0.1:1", "--job", "j"}, "graphfed keys --job"},
		{[]string{"aggregator", "--nats", "nats://127.0.0.1:1", "--job", "j"}, "--insecure"},
		{[]string{"agent", "--nats", "nats://127.0.0.1:1", "--job", "j", "--data", "/nonexistent"}, "graphfed keys --job"},
		{[]string{"server", "--port", "-1"}, "graphfed keys --job"},
		{[]string{"server", "--port", "-1", "--config", open, "--store", t.TempDir()}, "lists no logins"},
		{[]string{"aggregator", "--insecure", "--nats", "nats://127.0.0.1:1", "--job", "j", "--round-timeout", "1s"}, "deploy: aggregator of j"},
		// A job on a keyring fixes its schema before anything connects:
		// the first hello, an attacker's included, never sets it.
		{[]string{"aggregator", "--nats", "nats://127.0.0.1:1", "--job", "j", "--creds", "/nonexistent.nk", "--keyring", "/nonexistent.json"},
			"give --schema HASH:PARAMS"},
	} {
		root := newRootCmd()
		root.SetArgs(append(tc.args, "--json"))
		_, err := executeForReport(t, root)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
		if tc.args[1] == "--insecure" && err != nil && strings.Contains(err.Error(), "refusing") {
			t.Errorf("%v: refused despite --insecure: %v", tc.args, err)
		}
	}
}
