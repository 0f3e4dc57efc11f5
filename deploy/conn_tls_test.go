package deploy

import (
	"path/filepath"
	"strings"
	"testing"

	"graphfed/bus"
)

// A party's TLS files reach its connection: with them TLS is required, so
// a server without TLS is never reached, and a certificate without its key
// fails at once.
func TestConnTLSFiles(t *testing.T) {
	set, err := bus.GenerateTLSSet(bus.TLSSetOptions{Job: testJob, Hosts: []string{"127.0.0.1"}, Parties: []string{"bank-0"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range set.Files {
		if err := bus.WriteTLSFile(filepath.Join(dir, f.Name), f); err != nil {
			t.Fatal(err)
		}
	}
	s, err := bus.StartServer(bus.ServerOptions{NoJetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	tr, err := Conn(ConnOptions{URL: s.ClientURL(), TLS: TLSFiles{CA: filepath.Join(dir, bus.TLSCACertFile),
		Cert: filepath.Join(dir, "bank-0.crt"), Key: filepath.Join(dir, "bank-0.key")}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// The first dial is made before Conn returns: a plain connection
	// would be up by now.
	if tr.Conn().IsConnected() {
		t.Fatal("connected without TLS to a server that offers none")
	}
	_, err = Conn(ConnOptions{URL: s.ClientURL(), TLS: TLSFiles{Cert: filepath.Join(dir, "bank-0.crt")}})
	if err == nil || !strings.Contains(err.Error(), "tls") {
		t.Fatalf("a certificate without its key: %v", err)
	}
}
