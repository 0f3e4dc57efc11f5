package main

import (
	"os"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/operator"
)

// A party's connection security: --insecure to run without credentials
// (operator.RequireCredentials), and its mutual TLS files.

// registerInsecure adds --insecure to cmd.
func registerInsecure(cmd *cobra.Command, insecure *bool) {
	cmd.Flags().BoolVar(insecure, "insecure", false,
		"run without credentials: anyone who reaches the server can read and forge every message (trials on a trusted machine only)")
}

// requireCredentials is operator.RequireCredentials, warning on stderr.
func requireCredentials(what string, have, insecure bool, use string, log zerolog.Logger) error {
	return operator.RequireCredentials(what, have, insecure, use, os.Stderr, log)
}

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
