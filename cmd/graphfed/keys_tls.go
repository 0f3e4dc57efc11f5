package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"graphfed/bus"
)

// keysTLS are the TLS flags of `graphfed keys`: generate the job's TLS
// material (--tls, optionally signed by an existing CA), or name a
// server certificate of one's own in the server configurations.
type keysTLS struct {
	generate              bool
	caCert, caKey         string
	serverCert, serverKey string
	hosts                 []string
	dir                   string
	validity              time.Duration
}

func (k *keysTLS) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&k.generate, "tls", false, "also generate mutual TLS: a job CA (ca.crt, and ca.key to keep offline), the server's certificate "+
		"(server.crt, server.key) and a client certificate per credential (<id>.crt, <id>.key); the server configurations require them")
	f.StringSliceVar(&k.hosts, "tls-hosts", nil, "names and IPs the server certificate carries besides 127.0.0.1, localhost and the hosts "+
		"of --listen and --cluster: every address parties dial")
	f.StringVar(&k.dir, "tls-dir", "", "directory the server configurations name for server.crt, server.key and ca.crt, "+
		"where the server keeps them (default --out; relative to the server's working directory)")
	f.DurationVar(&k.validity, "tls-validity", bus.DefaultTLSValidity, "validity of the generated certificates")
	f.StringVar(&k.caCert, "tls-ca-cert", "", "your own CA certificate: with --tls-ca-key, sign the generated certificates with it "+
		"instead of a new job CA; with --tls-server-cert, the CA the server checks client certificates against")
	f.StringVar(&k.caKey, "tls-ca-key", "", "the key of --tls-ca-cert (read, never copied); implies --tls")
	f.StringVar(&k.serverCert, "tls-server-cert", "", "your own server certificate (with --tls-server-key and --tls-ca-cert): "+
		"the configurations name these files as given and nothing is generated; parties' certificates come from your CA")
	f.StringVar(&k.serverKey, "tls-server-key", "", "the key of --tls-server-cert")
}

// keysTLSJob is what `graphfed keys` hands its TLS step: the job, the
// output directory, the addresses in the configurations, and every
// credential's id (each gets a client certificate).
type keysTLSJob struct {
	job, out, listen string
	cluster, ids     []string
}

// apply carries out the TLS flags after the rest of the keys is rendered
// and found free to write, before any of it is written: it renders the
// TLS material, refuses to overwrite any of it, writes it into j.out,
// adds the tls blocks to confs and says what it wrote. Its result goes
// into the JSON report; nil without TLS flags.
func (k *keysTLS) apply(g *globalFlags, j keysTLSJob, confs []serverConf, now time.Time) (map[string]any, error) {
	own := k.serverCert != "" || k.serverKey != ""
	gen := k.generate || k.caKey != ""
	switch {
	case !gen && !own:
		if k.caCert != "" || len(k.hosts) > 0 || k.dir != "" {
			return nil, errors.New("--tls-ca-cert, --tls-hosts and --tls-dir need --tls (generate) or --tls-server-cert (your own server certificate)")
		}
		return nil, nil
	case gen && own:
		return nil, errors.New("--tls (or --tls-ca-key) generates the server's certificate; --tls-server-cert names your own: give one or the other")
	case own:
		return k.applyOwn(g, confs, now)
	}
	return k.applyGenerated(g, j, confs, now)
}

// applyOwn names a server certificate, key and CA of one's own in the
// configurations. They are checked here when this machine can read them
// (the keys are often made on another machine than the server's).
func (k *keysTLS) applyOwn(g *globalFlags, confs []serverConf, now time.Time) (map[string]any, error) {
	if k.serverCert == "" || k.serverKey == "" || k.caCert == "" {
		return nil, errors.New("--tls-server-cert needs --tls-server-key and --tls-ca-cert (the CA of the parties' certificates)")
	}
	if len(k.hosts) > 0 || k.dir != "" {
		return nil, errors.New("--tls-hosts and --tls-dir apply to generated certificates, not to --tls-server-cert")
	}
	t := bus.ServerTLS{CertFile: k.serverCert, KeyFile: k.serverKey, CAFile: k.caCert}
	checked := true
	for _, p := range []string{t.CertFile, t.KeyFile, t.CAFile} {
		if _, err := os.Stat(p); err != nil {
			checked = false
		}
	}
	var names []string
	if checked {
		var err error
		if names, err = bus.CheckServerTLS(t, now); err != nil {
			return nil, err
		}
	}
	if err := addTLSToConfigs(confs, &t); err != nil {
		return nil, err
	}
	out := g.humanOut()
	fmt.Fprintf(out, "TLS: the server configurations require mutual TLS with your own files:\n")
	fmt.Fprintf(out, "  %-40s server certificate\n  %-40s its key\n  %-40s CA of the parties' certificates\n", t.CertFile, t.KeyFile, t.CAFile)
	if checked {
		fmt.Fprintf(out, "  checked: the key is the certificate's, which chains to the CA and names %s\n", strings.Join(names, ", "))
	} else {
		fmt.Fprintf(out, "  not checked: this machine cannot read all three files; the server reads them at its start\n")
	}
	return map[string]any{"mode": "own", "cert_file": t.CertFile, "key_file": t.KeyFile, "ca_file": t.CAFile,
		"checked": checked, "names": names}, nil
}

// applyGenerated issues the job's TLS material and writes it into j.out.
func (k *keysTLS) applyGenerated(g *globalFlags, j keysTLSJob, confs []serverConf, now time.Time) (map[string]any, error) {
	var ca *bus.TLSCA
	switch {
	case k.caCert != "" && k.caKey != "":
		var err error
		if ca, err = bus.LoadTLSCA(k.caCert, k.caKey); err != nil {
			return nil, err
		}
	case k.caCert != "" || k.caKey != "":
		return nil, errors.New("--tls-ca-cert and --tls-ca-key go together: the CA to sign with and its key")
	}
	hosts, err := keysTLSHosts(j.listen, j.cluster, k.hosts)
	if err != nil {
		return nil, err
	}
	set, err := bus.GenerateTLSSet(bus.TLSSetOptions{Job: j.job, Hosts: hosts, Parties: j.ids, CA: ca, Now: now, Validity: k.validity})
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(set.Files))
	for i, f := range set.Files {
		paths[i] = filepath.Join(j.out, f.Name)
		if _, err := os.Lstat(paths[i]); !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s exists; keys are never overwritten, choose another --out", paths[i])
		}
	}
	dir := k.dir
	if dir == "" {
		dir = j.out
	}
	t := bus.ServerTLS{CertFile: filepath.Join(dir, bus.TLSServerCertFile), KeyFile: filepath.Join(dir, bus.TLSServerKeyFile),
		CAFile: filepath.Join(dir, bus.TLSCACertFile)}
	// Rendered before anything is written, like the rest of the keys.
	if err := addTLSToConfigs(confs, &t); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(j.out, 0o700); err != nil {
		return nil, err
	}
	for i, f := range set.Files {
		if err := bus.WriteTLSFile(paths[i], f); err != nil {
			return nil, err
		}
	}
	out := g.humanOut()
	fmt.Fprintf(out, "TLS for job %s in %s (valid until %s):\n", j.job, j.out, set.CA.Certificate().NotAfter.Format(time.DateOnly))
	for i, f := range set.Files {
		fmt.Fprintf(out, "  %-40s %s\n", paths[i], tlsFileUse(f, set.Hosts))
	}
	fmt.Fprintf(out, "  parties connect to tls:// URLs with --tls-ca %s --tls-cert <id>.crt --tls-key <id>.key\n", bus.TLSCACertFile)
	files := map[string]string{}
	for i, f := range set.Files {
		files[f.Name] = paths[i]
	}
	return map[string]any{"mode": "generated", "own_ca": ca != nil, "hosts": set.Hosts, "files": files,
		"not_after": set.CA.Certificate().NotAfter.UTC().Format(time.RFC3339),
		"cert_file": t.CertFile, "key_file": t.KeyFile, "ca_file": t.CAFile}, nil
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

// keysTLSHosts are the server certificate's names: loopback (trials and
// the walkthrough), the hosts of --listen and of every --cluster node
// (routes dial them and verify the certificate against them), and extra.
func keysTLSHosts(listen string, cluster, extra []string) ([]string, error) {
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

// credentialIDs are the ids of creds, in order: each gets a client
// certificate.
func credentialIDs(creds []bus.Credential) []string {
	ids := make([]string, len(creds))
	for i, c := range creds {
		ids[i] = c.ID
	}
	return ids
}
