package main

import (
	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
)

// tlsFlags are a party's mutual TLS files, --tls-ca, --tls-cert and
// --tls-key, on every command that takes --creds: one definition, so that
// the aggregator, the agents, the audit and `keys ledger` name and check
// them alike.
type tlsFlags struct {
	files deploy.TLSFiles
}

func (t *tlsFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&t.files.CA, "tls-ca", "", "CA certificate the server's must chain to (graphfed keys --tls: ca.crt); any --tls-* flag makes TLS required")
	f.StringVar(&t.files.Cert, "tls-cert", "", "this party's TLS client certificate for mutual TLS (graphfed keys --tls: <party>.crt)")
	f.StringVar(&t.files.Key, "tls-key", "", "the key of --tls-cert (graphfed keys --tls: <party>.key, mode 0600)")
}

// connect adds the TLS files to a connection's options.
func (t *tlsFlags) connect(o bus.ConnectOptions) bus.ConnectOptions {
	o.TLSCA, o.TLSCert, o.TLSKey = t.files.CA, t.files.Cert, t.files.Key
	return o
}
