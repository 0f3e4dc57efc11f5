package bus

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// tlsTestParties are the credentials of a small job, the ledger
// administrator included: the generator issues a certificate to any id.
var tlsTestParties = []string{AggregatorID, "bank-a", "bank-b", AuditorID, "ledger-admin"}

func tlsFile(t *testing.T, set *TLSSet, name string) TLSFile {
	t.Helper()
	for _, f := range set.Files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("the set has no %s", name)
	return TLSFile{}
}

func mustCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	c, err := parseCertPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The generated set is a chain: every certificate verifies against the
// job CA for its use, and for its use only; the server names the hosts
// given, the parties are their ids, and nothing outlives the CA.
func TestTLSSetChainVerifies(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	set, err := GenerateTLSSet(TLSSetOptions{Job: "aml-1", Parties: tlsTestParties, Now: now,
		Hosts: []string{"127.0.0.1", "localhost", "0.0.0.0", "NATS-1.example.org", "[::1]", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.Files {
		names = append(names, f.Name)
		if f.Secret != strings.HasSuffix(f.Name, ".key") {
			t.Fatalf("%s: secret %v", f.Name, f.Secret)
		}
	}
	want := []string{"ca.crt", "ca.key", "server.crt", "server.key"}
	for _, id := range tlsTestParties {
		want = append(want, id+".crt", id+".key")
	}
	if !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	ca := mustCert(t, tlsFile(t, set, "ca.crt").Data)
	if !ca.IsCA || !ca.MaxPathLenZero || ca.MaxPathLen != 0 || ca.KeyUsage&x509.KeyUsageCertSign == 0 ||
		!strings.Contains(ca.Subject.CommonName, "aml-1") || ca.CheckSignatureFrom(ca) != nil {
		t.Fatalf("CA %+v", ca.Subject)
	}
	if got := ca.NotAfter.Sub(now); got != DefaultTLSValidity || !ca.NotBefore.Before(now) {
		t.Fatalf("CA valid %v to %v", ca.NotBefore, ca.NotAfter)
	}
	if _, err := tls.X509KeyPair(tlsFile(t, set, "ca.crt").Data, tlsFile(t, set, "ca.key").Data); err != nil {
		t.Fatalf("CA key: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	verify := func(c *x509.Certificate, host string, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}

	srv := mustCert(t, tlsFile(t, set, "server.crt").Data)
	if want := []string{"127.0.0.1", "localhost", "nats-1.example.org", "::1"}; !slices.Equal(set.Hosts, want) {
		t.Fatalf("hosts %v, want %v", set.Hosts, want)
	}
	for _, h := range []string{"127.0.0.1", "localhost", "nats-1.example.org", "::1"} {
		for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if err := verify(srv, h, u); err != nil {
				t.Fatalf("server certificate for %s, usage %v: %v", h, u, err)
			}
		}
	}
	if err := verify(srv, "nats-2.example.org", x509.ExtKeyUsageServerAuth); err == nil {
		t.Fatal("the server certificate verifies for a host it does not name")
	}
	for _, ip := range srv.IPAddresses {
		if ip.Equal(net.IPv4zero) {
			t.Fatal("the server certificate names 0.0.0.0")
		}
	}
	if _, err := tls.X509KeyPair(tlsFile(t, set, "server.crt").Data, tlsFile(t, set, "server.key").Data); err != nil {
		t.Fatalf("server key: %v", err)
	}

	for _, id := range tlsTestParties {
		c := mustCert(t, tlsFile(t, set, id+".crt").Data)
		if c.Subject.CommonName != id || c.IsCA {
			t.Fatalf("%s: subject %v, CA %v", id, c.Subject, c.IsCA)
		}
		if err := verify(c, "", x509.ExtKeyUsageClientAuth); err != nil {
			t.Fatalf("%s for client auth: %v", id, err)
		}
		// A party's certificate cannot pose as the server.
		if err := verify(c, "", x509.ExtKeyUsageServerAuth); err == nil {
			t.Fatalf("%s's certificate verifies for server auth", id)
		}
		if c.NotAfter.After(ca.NotAfter) {
			t.Fatalf("%s outlives the CA: %v > %v", id, c.NotAfter, ca.NotAfter)
		}
		if _, err := tls.X509KeyPair(tlsFile(t, set, id+".crt").Data, tlsFile(t, set, id+".key").Data); err != nil {
			t.Fatalf("%s key: %v", id, err)
		}
		if err := verify(c, "", x509.ExtKeyUsageClientAuth); err != nil {
			t.Fatal(err)
		}
	}

	// Another job's CA verifies none of it.
	other, err := NewTLSCA("aml-2", now, 0)
	if err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Certificate())
	if _, err := srv.Verify(x509.VerifyOptions{Roots: otherRoots, CurrentTime: now}); err == nil {
		t.Fatal("the server certificate verifies against another job's CA")
	}
}

func TestTLSHosts(t *testing.T) {
	got, err := TLSHosts([]string{" 127.0.0.1 ", "0.0.0.0", "::", "[::1]", "Example.ORG", "example.org", "::ffff:10.0.0.1", "a-b.c9"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1", "::1", "example.org", "10.0.0.1", "a-b.c9"}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for _, bad := range []string{"", "a b", "under_score", "-lead.example", "trail-.example", "a..b", "x\"y", "host:4222", strings.Repeat("a", 64)} {
		if _, err := TLSHosts([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTLSSetRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    TLSSetOptions
		want string
	}{
		{"ca is a file", TLSSetOptions{Job: "j", Hosts: []string{"localhost"}, Parties: []string{"ca"}}, "reserved"},
		{"server is a file", TLSSetOptions{Job: "j", Hosts: []string{"localhost"}, Parties: []string{"server"}}, "reserved"},
		{"twice", TLSSetOptions{Job: "j", Hosts: []string{"localhost"}, Parties: []string{"bank-a", "bank-a"}}, "twice"},
		{"bad id", TLSSetOptions{Job: "j", Hosts: []string{"localhost"}, Parties: []string{"../x"}}, "not [a-z0-9-]"},
		{"bad job", TLSSetOptions{Job: "J", Hosts: []string{"localhost"}}, "not [a-z0-9-]"},
		{"no host", TLSSetOptions{Job: "j", Hosts: []string{"0.0.0.0"}}, "no host"},
		{"bad host", TLSSetOptions{Job: "j", Hosts: []string{"a/b"}}, "neither an IP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GenerateTLSSet(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// Keys are written 0600, certificates 0644, and nothing is overwritten.
func TestWriteTLSFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "bank-a.key")
	cert := filepath.Join(dir, "bank-a.crt")
	if err := WriteTLSFile(key, TLSFile{Name: "bank-a.key", Data: []byte("secret"), Secret: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTLSFile(cert, TLSFile{Name: "bank-a.crt", Data: []byte("public")}); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{key: 0o600, cert: 0o644} {
		st, err := os.Stat(p)
		// The umask may only take permissions away.
		if err != nil || st.Mode().Perm()&^mode != 0 || mode == 0o600 && st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", p, st, err)
		}
	}
	err := WriteTLSFile(key, TLSFile{Name: "bank-a.key", Data: []byte("other"), Secret: true})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("overwrite: %v", err)
	}
	if data, _ := os.ReadFile(key); string(data) != "secret" {
		t.Fatalf("the key was replaced: %q", data)
	}
}

// writePEMs writes a CA's certificate and key where LoadTLSCA reads them.
func writePEMs(t *testing.T, dir string, ca *TLSCA) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "my-ca.crt"), filepath.Join(dir, "my-ca.key")
	key, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// "Take your own": a CA from files signs the set, which then carries its
// certificate but not its key; a key that is not the certificate's, or a
// certificate that is no CA, is refused.
func TestLoadTLSCA(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	mine, err := NewTLSCA("corp", now, 2*DefaultTLSValidity)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writePEMs(t, dir, mine)
	ca, err := LoadTLSCA(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	set, err := GenerateTLSSet(TLSSetOptions{Job: "aml-1", Hosts: []string{"localhost"}, Parties: []string{"bank-a"}, CA: ca, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Files {
		if f.Name == TLSCAKeyFile {
			t.Fatal("the set carries the key of a CA it did not make")
		}
	}
	if !bytes.Equal(tlsFile(t, set, "ca.crt").Data, mine.CertPEM()) {
		t.Fatal("ca.crt is not the given CA's certificate")
	}
	roots := x509.NewCertPool()
	roots.AddCert(mine.Certificate())
	c := mustCert(t, tlsFile(t, set, "bank-a.crt").Data)
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatal(err)
	}

	other, err := NewTLSCA("other", now, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey := writePEMs(t, t.TempDir(), other)
	if _, err := LoadTLSCA(certFile, otherKey); err == nil || !strings.Contains(err.Error(), "not the certificate's") {
		t.Fatalf("a foreign key: %v", err)
	}
	leafCert := filepath.Join(dir, "leaf.crt")
	leafKey := filepath.Join(dir, "leaf.key")
	os.WriteFile(leafCert, tlsFile(t, set, "bank-a.crt").Data, 0o644)
	os.WriteFile(leafKey, tlsFile(t, set, "bank-a.key").Data, 0o600)
	if _, err := LoadTLSCA(leafCert, leafKey); err == nil || !strings.Contains(err.Error(), "not a CA") {
		t.Fatalf("a party certificate as CA: %v", err)
	}
	if _, err := LoadTLSCA(filepath.Join(dir, "none.crt"), keyFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// writeTLSSet writes a set into dir and returns the server's files.
func writeTLSSet(t *testing.T, dir string, set *TLSSet) ServerTLS {
	t.Helper()
	for _, f := range set.Files {
		if err := WriteTLSFile(filepath.Join(dir, f.Name), f); err != nil {
			t.Fatal(err)
		}
	}
	return ServerTLS{CertFile: filepath.Join(dir, TLSServerCertFile), KeyFile: filepath.Join(dir, TLSServerKeyFile),
		CAFile: filepath.Join(dir, TLSCACertFile)}
}

func TestCheckServerTLS(t *testing.T) {
	now := time.Now()
	set, err := GenerateTLSSet(TLSSetOptions{Job: "aml-1", Hosts: []string{"localhost", "10.1.2.3"}, Parties: []string{"bank-a"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := writeTLSSet(t, dir, set)
	names, err := CheckServerTLS(st, now)
	if err != nil || !slices.Equal(names, []string{"localhost", "10.1.2.3"}) {
		t.Fatalf("names %v, %v", names, err)
	}
	bad := st
	bad.KeyFile = filepath.Join(dir, "bank-a.key")
	if _, err := CheckServerTLS(bad, now); err == nil || !strings.Contains(err.Error(), "not the certificate's") {
		t.Fatalf("a party's key: %v", err)
	}
	bad = st
	bad.CertFile, bad.KeyFile = filepath.Join(dir, "bank-a.crt"), filepath.Join(dir, "bank-a.key")
	if _, err := CheckServerTLS(bad, now); err == nil || !strings.Contains(err.Error(), "server authentication") {
		t.Fatalf("a party's certificate as the server's: %v", err)
	}
	other, err := GenerateTLSSet(TLSSetOptions{Job: "aml-2", Hosts: []string{"localhost"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	bad = st
	bad.CAFile = writeTLSSet(t, t.TempDir(), other).CAFile
	if _, err := CheckServerTLS(bad, now); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("another CA: %v", err)
	}
	if _, err := CheckServerTLS(st, now.Add(2*DefaultTLSValidity)); err == nil {
		t.Fatal("an expired certificate passes")
	}
}

// The rendered blocks are mutual TLS as nats-server reads them: client
// certificates required and checked against the job CA, and TLS on the
// routes of a cluster node.
func TestServerTLSBlocks(t *testing.T) {
	set, err := GenerateTLSSet(TLSSetOptions{Job: "aml-1", Hosts: []string{"127.0.0.1", "nats-1.example", "nats-2.example"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := writeTLSSet(t, dir, set)
	var b bytes.Buffer
	if err := writeServerTLS(&b, &st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tls {", "cert_file: " + quote(st.CertFile), "key_file: " + quote(st.KeyFile),
		"ca_file: " + quote(st.CAFile), "verify: true", "timeout: 2"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("block lacks %q:\n%s", want, b.String())
		}
	}
	for _, bad := range []ServerTLS{
		{CertFile: st.CertFile, KeyFile: st.KeyFile},
		{KeyFile: st.KeyFile, CAFile: st.CAFile},
		{CertFile: st.CertFile, KeyFile: `a"b`, CAFile: st.CAFile},
		{CertFile: st.CertFile, KeyFile: st.KeyFile, CAFile: "a\nb"},
	} {
		if err := writeServerTLS(&bytes.Buffer{}, &bad); err == nil {
			t.Errorf("%+v rendered", bad)
		}
		if err := writeClusterTLS(&bytes.Buffer{}, &bad); err == nil {
			t.Errorf("%+v rendered in a cluster", bad)
		}
	}

	dep, err := NewDeployment("aml-1", []string{"bank-a", "bank-b"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cluster *ClusterOptions
	}{
		{"single", nil},
		{"cluster node", &ClusterOptions{Listen: "0.0.0.0:6222", Routes: []string{"nats-2.example:6222"}, Password: "pw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ServerConfigOptions{Listen: "127.0.0.1:4222", Cluster: tc.cluster}
			if tc.cluster != nil {
				o.ServerName = "graphfed-1"
			}
			conf, err := ServerConfig(ring, o)
			if err != nil {
				t.Fatal(err)
			}
			withTLS, err := AddServerTLS(conf, &st)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := AddServerTLS(withTLS, &st); err == nil {
				t.Fatal("a second tls block was added")
			}
			path := filepath.Join(t.TempDir(), "server.conf")
			if err := os.WriteFile(path, withTLS, 0o600); err != nil {
				t.Fatal(err)
			}
			opts, err := server.ProcessConfigFile(path)
			if err != nil {
				t.Fatalf("%v\n%s", err, withTLS)
			}
			if opts.TLSConfig == nil || opts.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert ||
				opts.TLSConfig.ClientCAs == nil || opts.TLSTimeout != 2 {
				t.Fatalf("client TLS: not mutual with the job CA and a 2 s handshake:\n%s", withTLS)
			}
			if got := opts.Cluster.TLSConfig != nil; got != (tc.cluster != nil) {
				t.Fatalf("route TLS %v with cluster %v", got, tc.cluster != nil)
			}
			if tc.cluster != nil && opts.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
				t.Fatal("routes do not verify the other node's certificate")
			}
			// What the configuration said before stays.
			if len(opts.Nkeys) == 0 && len(opts.Accounts) == 0 || opts.MaxPayload == 0 || !opts.JetStream {
				t.Fatalf("the rest of the configuration was lost:\n%s", withTLS)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }
