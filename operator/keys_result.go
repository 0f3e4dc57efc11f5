package operator

import (
	"fmt"
	"io"
	"strings"
	"time"

	"graphfed/bus"
)

// KeysResult is what WriteKeys wrote.
type KeysResult struct {
	Job, Out        string
	Banks           int
	ClusterNodes    int
	Seeds           []SeedFile // one per party, in the keyring's order
	LedgerAdminSeed string     // the ledger administrator's seed: the servers' operator only
	Keyring         string
	ServerConfigs   []ServerConfigFile
	MaxPayload      int        // the configurations' payload limit
	LargestMessage  int        // the job's largest message, which MaxPayload fits with headroom
	TLS             *TLSResult // nil without TLS
}

// SeedFile is a party's seed file.
type SeedFile struct {
	Path, ID, Role string
}

// ServerConfigFile is a server configuration written and what it is for.
type ServerConfigFile struct {
	Path, What string
}

// WriteText writes what was written and who gets which file, as
// `graphfed keys` prints it.
func (r KeysResult) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.TLS != nil {
		r.TLS.writeText(&b)
	}
	fmt.Fprintf(&b, "keys for job %s in %s:\n", r.Job, r.Out)
	for _, s := range r.Seeds {
		fmt.Fprintf(&b, "  %-40s seed of %s (%s): give it to %s only\n", s.Path, s.ID, s.Role, s.ID)
	}
	fmt.Fprintf(&b, "  %-40s seed of the ledger administrator: the NATS servers' operator only, never a party\n", r.LedgerAdminSeed)
	fmt.Fprintf(&b, "  %-40s public keys (signature verification)\n", r.Keyring)
	fmt.Fprintf(&b, "  payload limit %d bytes (%d MiB): the job's largest message, %d bytes, with headroom\n",
		r.MaxPayload, r.MaxPayload>>20, r.LargestMessage)
	for _, c := range r.ServerConfigs {
		fmt.Fprintf(&b, "  %-40s %s\n", c.Path, c.What)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Metrics are the metrics of `graphfed keys --json`.
func (r KeysResult) Metrics() map[string]any {
	var ids, seeds, confs []string
	for _, s := range r.Seeds {
		ids, seeds = append(ids, s.ID), append(seeds, s.Path)
	}
	for _, c := range r.ServerConfigs {
		confs = append(confs, c.Path)
	}
	return map[string]any{
		"job": r.Job, "out": r.Out, "parties": ids, "seed_files": seeds, "ledger_admin_seed": r.LedgerAdminSeed, "keyring": r.Keyring,
		"server_configs": confs, "cluster_nodes": r.ClusterNodes, "max_payload": r.MaxPayload,
		"largest_message": r.LargestMessage, "tls": r.TLS.metrics(),
	}
}

func (t *TLSResult) writeText(b *strings.Builder) {
	if t.Mode == "own" {
		fmt.Fprintf(b, "TLS: the server configurations require mutual TLS with your own files:\n")
		fmt.Fprintf(b, "  %-40s server certificate\n  %-40s its key\n  %-40s CA of the parties' certificates\n", t.CertFile, t.KeyFile, t.CAFile)
		if t.Checked {
			fmt.Fprintf(b, "  checked: the key is the certificate's, which chains to the CA and names %s\n", strings.Join(t.Names, ", "))
		} else {
			fmt.Fprintf(b, "  not checked: this machine cannot read all three files; the server reads them at its start\n")
		}
		return
	}
	fmt.Fprintf(b, "TLS for job %s in %s (valid until %s):\n", t.Job, t.Out, t.NotAfter.Format(time.DateOnly))
	for _, f := range t.Files {
		fmt.Fprintf(b, "  %-40s %s\n", f.Path, f.Use)
	}
	fmt.Fprintf(b, "  parties connect to tls:// URLs with --tls-ca %s --tls-cert <id>.crt --tls-key <id>.key\n", bus.TLSCACertFile)
}

// metrics is the "tls" object of the --json metrics: nil without TLS.
func (t *TLSResult) metrics() map[string]any {
	switch {
	case t == nil:
		return nil
	case t.Mode == "own":
		return map[string]any{"mode": "own", "cert_file": t.CertFile, "key_file": t.KeyFile, "ca_file": t.CAFile,
			"checked": t.Checked, "names": t.Names}
	}
	files := map[string]string{}
	for _, f := range t.Files {
		files[f.Name] = f.Path
	}
	return map[string]any{"mode": "generated", "own_ca": t.OwnCA, "hosts": t.Hosts, "files": files,
		"not_after": t.NotAfter.UTC().Format(time.RFC3339),
		"cert_file": t.CertFile, "key_file": t.KeyFile, "ca_file": t.CAFile}
}
