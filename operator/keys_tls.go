package operator

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"graphfed/bus"
)

// KeysTLS is the TLS of a deployment: generate the job's TLS material
// (Generate, optionally signed by an existing CA: CACert and CAKey), or
// name a server certificate of one's own (ServerCert, ServerKey and the
// parties' CA, CACert) in the server configurations. The zero value is
// no TLS.
type KeysTLS struct {
	Generate              bool
	CACert, CAKey         string
	ServerCert, ServerKey string
	// Hosts are names and IPs the generated server certificate carries
	// besides loopback and the hosts of Listen and Cluster.
	Hosts []string
	// Dir is where the server keeps server.crt, server.key and ca.crt, as
	// the configurations name them; empty: the keys' directory.
	Dir      string
	Validity time.Duration // of generated certificates; 0: bus.DefaultTLSValidity
}

// TLSResult is the TLS WriteKeys set up: Mode "generated" (Files written,
// valid until NotAfter) or "own" (the operator's files, Checked when this
// machine could read them).
type TLSResult struct {
	Mode                      string
	CertFile, KeyFile, CAFile string // as the server configurations name them
	// generated
	Job, Out string
	OwnCA    bool // signed by the given CA rather than a new job CA
	Hosts    []string
	Files    []TLSFileWritten
	NotAfter time.Time
	// own
	Checked bool
	Names   []string // the server certificate's names, when Checked
}

// TLSFileWritten is one generated TLS file, where it went and who gets it.
type TLSFileWritten struct {
	Name, Path, Use string
}

// keysTLSJob is what the TLS step needs of the deployment: the job, the
// output directory, the addresses in the configurations, and every
// credential's id (each gets a client certificate).
type keysTLSJob struct {
	job, out, listen string
	cluster, ids     []string
}

// apply carries out k after the rest of the keys is rendered and found
// free to write, before any of it is written: it renders the TLS
// material, refuses to overwrite any of it, writes it into j.out and adds
// the tls blocks to confs. Nil without TLS.
func (k KeysTLS) apply(j keysTLSJob, confs []serverConf, now time.Time) (*TLSResult, error) {
	own := k.ServerCert != "" || k.ServerKey != ""
	gen := k.Generate || k.CAKey != ""
	switch {
	case !gen && !own:
		if k.CACert != "" || len(k.Hosts) > 0 || k.Dir != "" {
			return nil, errors.New("--tls-ca-cert, --tls-hosts and --tls-dir need --tls (generate) or --tls-server-cert (your own server certificate)")
		}
		return nil, nil
	case gen && own:
		return nil, errors.New("--tls (or --tls-ca-key) generates the server's certificate; --tls-server-cert names your own: give one or the other")
	case own:
		return k.applyOwn(confs, now)
	}
	return k.applyGenerated(j, confs, now)
}

// applyOwn names a server certificate, key and CA of one's own in the
// configurations. They are checked here when this machine can read them
// (the keys are often made on another machine than the server's).
func (k KeysTLS) applyOwn(confs []serverConf, now time.Time) (*TLSResult, error) {
	if k.ServerCert == "" || k.ServerKey == "" || k.CACert == "" {
		return nil, errors.New("--tls-server-cert needs --tls-server-key and --tls-ca-cert (the CA of the parties' certificates)")
	}
	if len(k.Hosts) > 0 || k.Dir != "" {
		return nil, errors.New("--tls-hosts and --tls-dir apply to generated certificates, not to --tls-server-cert")
	}
	t := bus.ServerTLS{CertFile: k.ServerCert, KeyFile: k.ServerKey, CAFile: k.CACert}
	r := &TLSResult{Mode: "own", CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile, Checked: true}
	for _, p := range []string{t.CertFile, t.KeyFile, t.CAFile} {
		if _, err := os.Stat(p); err != nil {
			r.Checked = false
		}
	}
	if r.Checked {
		var err error
		if r.Names, err = bus.CheckServerTLS(t, now); err != nil {
			return nil, err
		}
	}
	if err := addTLSToConfigs(confs, &t); err != nil {
		return nil, err
	}
	return r, nil
}

// applyGenerated issues the job's TLS material and writes it into j.out.
func (k KeysTLS) applyGenerated(j keysTLSJob, confs []serverConf, now time.Time) (*TLSResult, error) {
	var ca *bus.TLSCA
	switch {
	case k.CACert != "" && k.CAKey != "":
		var err error
		if ca, err = bus.LoadTLSCA(k.CACert, k.CAKey); err != nil {
			return nil, err
		}
	case k.CACert != "" || k.CAKey != "":
		return nil, errors.New("--tls-ca-cert and --tls-ca-key go together: the CA to sign with and its key")
	}
	hosts, err := tlsHosts(j.listen, j.cluster, k.Hosts)
	if err != nil {
		return nil, err
	}
	set, err := bus.GenerateTLSSet(bus.TLSSetOptions{Job: j.job, Hosts: hosts, Parties: j.ids, CA: ca, Now: now, Validity: k.Validity})
	if err != nil {
		return nil, err
	}
	r := &TLSResult{Mode: "generated", Job: j.job, Out: j.out, OwnCA: ca != nil, Hosts: set.Hosts,
		NotAfter: set.CA.Certificate().NotAfter}
	for _, f := range set.Files {
		r.Files = append(r.Files, TLSFileWritten{Name: f.Name, Path: filepath.Join(j.out, f.Name), Use: tlsFileUse(f, set.Hosts)})
	}
	for _, f := range r.Files {
		if err := refuseExisting(f.Path); err != nil {
			return nil, err
		}
	}
	dir := k.Dir
	if dir == "" {
		dir = j.out
	}
	t := bus.ServerTLS{CertFile: filepath.Join(dir, bus.TLSServerCertFile), KeyFile: filepath.Join(dir, bus.TLSServerKeyFile),
		CAFile: filepath.Join(dir, bus.TLSCACertFile)}
	r.CertFile, r.KeyFile, r.CAFile = t.CertFile, t.KeyFile, t.CAFile
	// Rendered before anything is written, like the rest of the keys.
	if err := addTLSToConfigs(confs, &t); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(j.out, 0o700); err != nil {
		return nil, err
	}
	for i, f := range set.Files {
		if err := bus.WriteTLSFile(r.Files[i].Path, f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// tlsFileUse says what a TLS file is and who gets it.
func tlsFileUse(f bus.TLSFile, hosts []string) string {
	switch {
	case f.Name == bus.TLSCACertFile:
		return "CA certificate: to every party and every server"
	case f.Name == bus.TLSCAKeyFile:
		return "CA key: keep it offline (whoever holds it can mint certificates for the job)"
	case f.Name == bus.TLSServerCertFile:
		return "server certificate for " + strings.Join(hosts, ", ")
	case f.Name == bus.TLSServerKeyFile:
		return "server key: to the NATS servers only"
	case f.Secret:
		return "TLS key of " + f.Party + ": give it to " + f.Party + " only"
	}
	return "TLS certificate of " + f.Party
}

// tlsHosts are the server certificate's names: loopback (trials and the
// walkthrough), the hosts of listen and of every cluster node (routes
// dial them and verify the certificate against them), and extra.
func tlsHosts(listen string, cluster, extra []string) ([]string, error) {
	hosts := []string{"127.0.0.1", "localhost"}
	for _, hp := range append([]string{listen}, cluster...) {
		h, _, err := net.SplitHostPort(hp)
		if err != nil {
			return nil, fmt.Errorf("tls hosts: %w", err)
		}
		hosts = append(hosts, h)
	}
	return append(hosts, extra...), nil
}

// addTLSToConfigs adds the tls blocks to every rendered configuration.
func addTLSToConfigs(confs []serverConf, t *bus.ServerTLS) error {
	for i := range confs {
		data, err := bus.AddServerTLS(confs[i].data, t)
		if err != nil {
			return err
		}
		confs[i].data = data
	}
	return nil
}
