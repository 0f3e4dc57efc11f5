package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"graphfed/bus"
)

// WriteKeys writes a seed per party (0600), the keyring and server
// configurations nats-server accepts, one per cluster node with routes to
// the others; it never overwrites, and bad settings write nothing.
func TestWriteKeysDeployment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "keys")
	rep, err := WriteKeys(keysConfig(out, []string{"bank-0", "bank-1", "bank-2"}, func(c *KeysConfig) {
		c.Cluster = []string{"nats-1.example:6222", "nats-2.example:6222", "nats-3.example:6222"}
		c.Store = "/var/lib/graphfed/js"
	}), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Banks != 3 || rep.ClusterNodes != 3 || len(rep.ServerConfigs) != 4 || rep.TLS != nil {
		t.Fatalf("result %+v", rep)
	}
	for _, id := range []string{"aggregator", "bank-0", "bank-1", "bank-2", "auditor", bus.LedgerAdminID} {
		p := filepath.Join(out, id+".nk")
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", p, st, err)
		}
		if _, err := bus.LoadSeedFile(p); err != nil {
			t.Fatal(err)
		}
	}
	ring, err := bus.LoadKeyring(filepath.Join(out, "keyring.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ring.Job() != "aml-1" || len(ring.Parties()) != 5 {
		t.Fatalf("keyring %s %v", ring.Job(), ring.Parties())
	}
	for i, name := range []string{"server.conf", "server-1.conf", "server-2.conf", "server-3.conf"} {
		o, err := server.ProcessConfigFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Five parties and the ledger administrator, each in an account.
		if len(o.Nkeys) != 6 || o.StoreDir != "/var/lib/graphfed/js" || o.MaxPayload != int32(rep.MaxPayload) {
			t.Fatalf("%s: %d users, store %q, payload %d", name, len(o.Nkeys), o.StoreDir, o.MaxPayload)
		}
		if i == 0 {
			continue
		}
		if o.ServerName != fmt.Sprintf("graphfed-%d", i) || len(o.Routes) != 2 || o.Cluster.Password == "" {
			t.Fatalf("%s: server %q routes %v", name, o.ServerName, o.Routes)
		}
		for _, r := range o.Routes {
			if strings.Contains(r.Host, fmt.Sprintf("nats-%d", i)) {
				t.Fatalf("%s routes to itself: %v", name, o.Routes)
			}
		}
	}

	if _, err := WriteKeys(keysConfig(out, []string{"bank-0"}, nil), time.Now()); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("over an existing deployment: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*KeysConfig)
		want   string
	}{
		{"bank named all", func(c *KeysConfig) { c.Banks = []string{"bank-0", "all"} }, "all"},
		{"duplicate bank", func(c *KeysConfig) { c.Banks = []string{"bank-0", "bank-0"} }, "bank-0"},
		{"bad bank id", func(c *KeysConfig) { c.Banks = []string{"Bank_0"} }, "Bank_0"},
		{"no banks", func(c *KeysConfig) { c.Banks = nil }, "no banks"},
		{"bad job", func(c *KeysConfig) { c.Job = "Job 1" }, "job"},
		{"two-node cluster", func(c *KeysConfig) { c.Cluster = []string{"a:6222", "b:6222"} }, "at least 3"},
		{"node without port", func(c *KeysConfig) { c.Cluster = []string{"a", "b", "c"} }, "--cluster node 1"},
		{"bad links", func(c *KeysConfig) { c.Links = "bank-0" }, "--links"},
		{"embedding rows without dimension", func(c *KeysConfig) { c.Size.EmbDim = 0 }, "go together"},
		{"over the payload ceiling", func(c *KeysConfig) { c.Size.Params = 1 << 27 }, "ceiling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "k")
			_, err := WriteKeys(keysConfig(dir, []string{"bank-0"}, tc.change), time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Fatalf("a refused run made %s", dir)
			}
		})
	}
}

// Empty settings take the defaults: the output directory keys-<job>, the
// client listen address, every pair of banks linked.
func TestWriteKeysDefaults(t *testing.T) {
	t.Chdir(t.TempDir())
	rep, err := WriteKeys(KeysConfig{Job: "j", Banks: []string{"a", "b"}, Size: bus.DefaultJobSize()}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Out != "keys-j" || rep.Keyring != filepath.Join("keys-j", "keyring.json") {
		t.Fatalf("result %+v", rep)
	}
	o, err := server.ProcessConfigFile(filepath.Join("keys-j", "server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Host != "0.0.0.0" || o.Port != 4222 {
		t.Fatalf("listen %s:%d", o.Host, o.Port)
	}
}

// The result says what was written as graphfed keys prints it: the TLS
// files first, then the seeds, and its metrics carry the --json keys.
func TestKeysResultText(t *testing.T) {
	out := filepath.Join(t.TempDir(), "keys")
	rep, err := WriteKeys(keysConfig(out, []string{"bank-0"}, func(c *KeysConfig) { c.TLS.Generate = true }), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"TLS for job aml-1 in " + out, "keys for job aml-1 in " + out + ":\n",
		"seed of bank-0 (bank): give it to bank-0 only", "seed of the ledger administrator", "nats-server configuration, single server",
		"payload limit " + fmt.Sprint(rep.MaxPayload) + " bytes"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "TLS for job") > strings.Index(text, "keys for job") {
		t.Errorf("TLS lines after the keys':\n%s", text)
	}
	m := rep.Metrics()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"cluster_nodes", "job", "keyring", "largest_message", "ledger_admin_seed", "max_payload", "out", "parties",
		"seed_files", "server_configs", "tls"}; !slices.Equal(keys, want) {
		t.Fatalf("metrics keys %v, want %v", keys, want)
	}
	if m["tls"].(map[string]any)["mode"] != "generated" {
		t.Fatalf("tls %v", m["tls"])
	}
}
