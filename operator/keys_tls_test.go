package operator

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"graphfed/bus"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keysConfig is DefaultKeysConfig for job aml-1 of banks into out, with
// change applied.
func keysConfig(out string, banks []string, change func(*KeysConfig)) KeysConfig {
	cfg := DefaultKeysConfig()
	cfg.Job, cfg.Banks, cfg.Out = "aml-1", banks, out
	if change != nil {
		change(&cfg)
	}
	return cfg
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(mustRead(t, path))
	if b == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// WriteKeys with TLS.Generate (graphfed keys --tls) writes the job CA, the server's pair and a pair
// per credential (keys 0600, certificates 0644), and every configuration
// requires mutual TLS with them, on the routes of a cluster too.
func TestKeysTLS(t *testing.T) {
	out := filepath.Join(t.TempDir(), "keys")
	rep, err := WriteKeys(keysConfig(out, []string{"bank-0", "bank-1"}, func(c *KeysConfig) {
		c.Listen = "0.0.0.0:4222"
		c.Cluster = []string{"nats-1.example:6222", "nats-2.example:6222", "nats-3.example:6222"}
		c.TLS.Generate, c.TLS.Hosts = true, []string{"nats.example.org"}
	}), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"aggregator", "bank-0", "bank-1", "auditor", bus.LedgerAdminID}
	files := map[string]os.FileMode{"ca.crt": 0o644, "ca.key": 0o600, "server.crt": 0o644, "server.key": 0o600}
	for _, id := range ids {
		files[id+".crt"], files[id+".key"] = 0o644, 0o600
	}
	for name, mode := range files {
		st, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		// The umask may take permissions away, never add them.
		if st.Mode().Perm()&^mode != 0 || mode == 0o600 && st.Mode().Perm() != mode {
			t.Fatalf("%s: mode %v, want %v", name, st.Mode().Perm(), mode)
		}
	}
	ca := readCert(t, filepath.Join(out, "ca.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	srv := readCert(t, filepath.Join(out, "server.crt"))
	if want := []string{"localhost", "nats-1.example", "nats-2.example", "nats-3.example", "nats.example.org"}; !slices.Equal(srv.DNSNames, want) ||
		len(srv.IPAddresses) != 1 || srv.IPAddresses[0].String() != "127.0.0.1" {
		t.Fatalf("server certificate names %v %v", srv.DNSNames, srv.IPAddresses)
	}
	for _, id := range ids {
		c := readCert(t, filepath.Join(out, id+".crt"))
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || c.Subject.CommonName != id {
			t.Fatalf("%s: %v, CN %s", id, err, c.Subject.CommonName)
		}
		if _, err := tls.LoadX509KeyPair(filepath.Join(out, id+".crt"), filepath.Join(out, id+".key")); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"server.conf", "server-1.conf", "server-2.conf", "server-3.conf"} {
		conf := mustRead(t, filepath.Join(out, name))
		for _, f := range []string{"server.crt", "server.key", "ca.crt"} {
			if !bytes.Contains(conf, []byte(`"`+filepath.Join(out, f)+`"`)) {
				t.Fatalf("%s does not name %s:\n%s", name, f, conf)
			}
		}
		o, err := server.ProcessConfigFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.TLSConfig == nil || o.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
			t.Fatalf("%s: client TLS %v", name, o.TLSConfig)
		}
		if (o.Cluster.TLSConfig != nil) != (i > 0) {
			t.Fatalf("%s: route TLS %v", name, o.Cluster.TLSConfig != nil)
		}
	}
	if m := rep.TLS; m == nil || m.Mode != "generated" || m.OwnCA || len(m.Files) != len(files) {
		t.Fatalf("report tls %+v", rep.TLS)
	}
}

// Existing TLS files are never overwritten, and a refusal writes nothing:
// not the seeds, not the rest of the TLS files.
func TestKeysTLSRefusesToOverwrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "keys")
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "bank-0.crt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := WriteKeys(keysConfig(out, []string{"bank-0", "bank-1"}, func(c *KeysConfig) { c.TLS.Generate = true }), time.Now())
	if err == nil || !strings.Contains(err.Error(), "bank-0.crt exists") {
		t.Fatalf("error %v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || string(mustRead(t, filepath.Join(out, "bank-0.crt"))) != "mine" {
		t.Fatalf("a refused run wrote %v", entries)
	}
}

// Take your own CA: it signs the server's and the parties' certificates;
// its certificate is copied beside them and its key is not.
func TestKeysTLSOwnCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := bus.NewTLSCA("corp", time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	caCert, caKey := filepath.Join(dir, "corp.crt"), filepath.Join(dir, "corp.key")
	os.WriteFile(caCert, ca.CertPEM(), 0o644)
	os.WriteFile(caKey, key, 0o600)
	out := filepath.Join(dir, "keys")
	rep, err := WriteKeys(keysConfig(out, []string{"bank-0"}, func(c *KeysConfig) { c.TLS.CACert, c.TLS.CAKey = caCert, caKey }), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "ca.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ca.key: %v", err)
	}
	if !bytes.Equal(mustRead(t, filepath.Join(out, "ca.crt")), ca.CertPEM()) {
		t.Fatal("ca.crt is not the given CA")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	for _, f := range []string{"server.crt", "bank-0.crt"} {
		if _, err := readCert(t, filepath.Join(out, f)).Verify(x509.VerifyOptions{Roots: roots,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if !rep.TLS.OwnCA {
		t.Fatalf("report tls %+v", rep.TLS)
	}
}

// Take your own server files: the configurations name them as given and
// nothing is generated; readable files are checked.
func TestKeysTLSOwnServerFiles(t *testing.T) {
	dir := t.TempDir()
	set, err := bus.GenerateTLSSet(bus.TLSSetOptions{Job: "corp", Hosts: []string{"nats.corp.example"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Files {
		if err := bus.WriteTLSFile(filepath.Join(dir, f.Name), f); err != nil {
			t.Fatal(err)
		}
	}
	cert, key, ca := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"), filepath.Join(dir, "ca.crt")
	for _, tc := range []struct {
		name          string
		cert, key, ca string
		checked       bool
	}{
		{"readable", cert, key, ca, true},
		{"on the server only", "/etc/graphfed/tls/nats.crt", "/etc/graphfed/tls/nats.key", "/etc/graphfed/tls/ca.crt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "keys")
			rep, err := WriteKeys(keysConfig(out, []string{"bank-0"}, func(c *KeysConfig) {
				c.TLS.ServerCert, c.TLS.ServerKey, c.TLS.CACert = tc.cert, tc.key, tc.ca
			}), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			conf := string(mustRead(t, filepath.Join(out, "server.conf")))
			for _, want := range []string{`cert_file: "` + tc.cert + `"`, `key_file: "` + tc.key + `"`, `ca_file: "` + tc.ca + `"`, "verify: true"} {
				if !strings.Contains(conf, want) {
					t.Fatalf("server.conf lacks %s:\n%s", want, conf)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*.crt")); len(m) != 0 {
				t.Fatalf("generated %v", m)
			}
			if m := rep.TLS; m.Mode != "own" || m.Checked != tc.checked {
				t.Fatalf("report tls %+v", m)
			}
		})
	}
	// A key that is not the certificate's is caught here, not at the
	// server's start.
	_, err = WriteKeys(keysConfig(filepath.Join(t.TempDir(), "keys"), []string{"bank-0"}, func(c *KeysConfig) {
		c.TLS.ServerCert, c.TLS.ServerKey, c.TLS.CACert = cert, filepath.Join(dir, "ca.key"), ca
	}), time.Now())
	if err == nil || !strings.Contains(err.Error(), "not the certificate's") {
		t.Fatalf("a mismatched key: %v", err)
	}
}

// TLS flags that contradict or lack each other are refused before
// anything is written.
func TestKeysTLSFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*KeysConfig)
		want   string
	}{
		{"hosts without tls", func(c *KeysConfig) { c.TLS.Hosts = []string{"a.example"} }, "need --tls"},
		{"generate and own", func(c *KeysConfig) { c.TLS.Generate, c.TLS.ServerCert, c.TLS.ServerKey = true, "s.crt", "s.key" }, "one or the other"},
		{"ca key alone", func(c *KeysConfig) { c.TLS.CAKey = "ca.key" }, "go together"},
		{"server cert alone", func(c *KeysConfig) { c.TLS.ServerCert = "s.crt" }, "needs --tls-server-key"},
		{"own with hosts", func(c *KeysConfig) {
			c.TLS = KeysTLS{ServerCert: "s.crt", ServerKey: "s.key", CACert: "ca.crt", Hosts: []string{"x"}}
		}, "apply to generated"},
		{"bad host", func(c *KeysConfig) { c.TLS.Generate, c.TLS.Hosts = true, []string{"a b"} }, "neither an IP"},
		{"bank named server", func(c *KeysConfig) { c.TLS.Generate, c.Banks = true, []string{"server"} }, "reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "keys")
			_, err := WriteKeys(keysConfig(out, []string{"bank-0"}, tc.change), time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused run made %s", out)
			}
		})
	}
}
