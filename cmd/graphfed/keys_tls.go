package main

import (
	"github.com/spf13/cobra"

	"graphfed/operator"
)

// registerKeysTLS adds the TLS flags of `graphfed keys` into t: generate
// the job's TLS material (--tls, optionally signed by an existing CA), or
// name a server certificate of one's own in the server configurations.
func registerKeysTLS(cmd *cobra.Command, t *operator.KeysTLS) {
	f := cmd.Flags()
	f.BoolVar(&t.Generate, "tls", false, "also generate mutual TLS: a job CA (ca.crt, and ca.key to keep offline), the server's certificate "+
		"(server.crt, server.key) and a client certificate per credential (<id>.crt, <id>.key); the server configurations require them")
	f.StringSliceVar(&t.Hosts, "tls-hosts", nil, "names and IPs the server certificate carries besides 127.0.0.1, localhost and the hosts "+
		"of --listen and --cluster: every address parties dial")
	f.StringVar(&t.Dir, "tls-dir", "", "directory the server configurations name for server.crt, server.key and ca.crt, "+
		"where the server keeps them (default --out; relative to the server's working directory)")
	f.DurationVar(&t.Validity, "tls-validity", t.Validity, "validity of the generated certificates")
	f.StringVar(&t.CACert, "tls-ca-cert", "", "your own CA certificate: with --tls-ca-key, sign the generated certificates with it "+
		"instead of a new job CA; with --tls-server-cert, the CA the server checks client certificates against")
	f.StringVar(&t.CAKey, "tls-ca-key", "", "the key of --tls-ca-cert (read, never copied); implies --tls")
	f.StringVar(&t.ServerCert, "tls-server-cert", "", "your own server certificate (with --tls-server-key and --tls-ca-cert): "+
		"the configurations name these files as given and nothing is generated; parties' certificates come from your CA")
	f.StringVar(&t.ServerKey, "tls-server-key", "", "the key of --tls-server-cert")
}
