package bus

import (
	"bytes"
	"fmt"
)

// ServerTLS are the files of a server's mutual TLS: its certificate and
// key, and the CA that every client's certificate must chain to (the job
// CA of `graphfed keys --tls`, or an organisation's own).
type ServerTLS struct {
	CertFile, KeyFile, CAFile string
}

// tlsHandshakeTimeout is the TLS handshake timeout of the rendered blocks,
// in seconds: nats-server's default, written out so that an operator sees
// it next to the files; parties across the internet complete a handshake
// well within it.
const tlsHandshakeTimeout = 2

// check refuses a missing file name, and one that cannot go between double
// quotes in the configuration. Without a CA file nats-server would verify
// client certificates against the system's trust store, which trusts
// every public CA: any certificate from anyone would pass.
func (t *ServerTLS) check() error {
	for _, f := range []struct{ name, path string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"ca_file", t.CAFile}} {
		if f.path == "" {
			return fmt.Errorf("tls: no %s", f.name)
		}
		if !confSafe(f.path) {
			return fmt.Errorf("tls: %s %q has quotes, backslashes or control characters", f.name, f.path)
		}
	}
	return nil
}

// writeServerTLS renders the client listener's tls block: mutual TLS, so
// that a connection must present a certificate that chains to t.CAFile
// (verify: true) before it may even try a login. NKeys authenticate and
// sign but do not encrypt; this encrypts, and keeps whoever holds no
// certificate of the job off the login prompt.
func writeServerTLS(b *bytes.Buffer, t *ServerTLS) error {
	if err := t.check(); err != nil {
		return err
	}
	b.WriteString("# Mutual TLS: every client presents a certificate from the job's CA.\n")
	fmt.Fprintf(b, "tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  verify: true\n  timeout: %d\n}\n\n",
		t.CertFile, t.KeyFile, t.CAFile, tlsHandshakeTimeout)
	return nil
}

// writeClusterTLS renders the tls block of a cluster block, indented for
// its inside: routes encrypted with the same files. nats-server always
// verifies both ends of a route (each node is the other's client), so the
// server certificate must allow client authentication too, as
// TLSCA.IssueServer's does, and name every node's route host.
func writeClusterTLS(b *bytes.Buffer, t *ServerTLS) error {
	if err := t.check(); err != nil {
		return err
	}
	fmt.Fprintf(b, "  tls {\n    cert_file: %q\n    key_file: %q\n    ca_file: %q\n    timeout: %d\n  }\n",
		t.CertFile, t.KeyFile, t.CAFile, tlsHandshakeTimeout)
	return nil
}

// AddServerTLS adds mutual TLS to a configuration that ServerConfig
// rendered without it: the client tls block before the jetstream block
// (where ServerConfig puts it) and, in a cluster node's configuration, TLS
// on its routes inside the cluster block. It refuses a configuration that
// has a tls block already, so that no file ends up with two.
func AddServerTLS(conf []byte, t *ServerTLS) ([]byte, error) {
	fail := func(err error) ([]byte, error) { return nil, fmt.Errorf("bus: server config: %w", err) }
	lines := bytes.SplitAfter(conf, []byte("\n"))
	for _, l := range lines {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte("tls {")) {
			return fail(fmt.Errorf("tls: the configuration has a tls block already"))
		}
	}
	var out bytes.Buffer
	placed := false
	for _, l := range lines {
		if !placed && bytes.Equal(l, []byte("jetstream {\n")) {
			if err := writeServerTLS(&out, t); err != nil {
				return fail(err)
			}
			placed = true
		}
		out.Write(l)
		if bytes.Equal(l, []byte("cluster {\n")) {
			if err := writeClusterTLS(&out, t); err != nil {
				return fail(err)
			}
		}
	}
	if !placed {
		out.WriteString("\n")
		if err := writeServerTLS(&out, t); err != nil {
			return fail(err)
		}
	}
	return out.Bytes(), nil
}
