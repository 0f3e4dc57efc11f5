package deploy

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"graphfed/bus"
)

// ConnOptions say how a party reaches the job's NATS server.
type ConnOptions struct {
	URL string // server or cluster URL (comma-separated)
	// Creds is the party's credentials file: an NKey seed as `graphfed
	// keys` writes them (it then also signs the party's envelopes), a JWT
	// .creds file, or empty for an open server.
	Creds string
	// TLS are the party's mutual TLS files: the job's CA certificate, the
	// party's certificate and key (bus.ConnectOptions.TLSCA, TLSCert,
	// TLSKey); any of them makes TLS required.
	TLS  TLSFiles
	Name string // connection name shown by the server; default the party id
	// OnError receives the server's asynchronous errors, permission
	// violations above all; nil: nats.go prints them to stderr.
	OnError func(error)
	// Events, when set, logs and counts the connection's slow-consumer
	// drops, disconnects and reconnects (bus.ConnEvents); the aggregator
	// and agents built here always set one.
	Events *bus.ConnEvents
	// InProcess connects to this embedded server through an in-memory pipe
	// (bus.ConnectOptions.InProcess); Local sets it with
	// LocalOptions.InProcess.
	InProcess nats.InProcessConnProvider
}

// TLSFiles are a party's mutual TLS files, PEM; empty fields are unused.
type TLSFiles struct {
	CA, Cert, Key string
}

// Conn dials the server and returns the party's transport, which owns the
// connection.
func Conn(o ConnOptions) (*bus.NATSTransport, error) {
	if o.URL == "" {
		return nil, errors.New("deploy: connect: no NATS URL")
	}
	nc, err := bus.Connect(o.URL, bus.ConnectOptions{Name: o.Name, Creds: o.Creds, OnError: o.OnError, Events: o.Events, InProcess: o.InProcess,
		TLSCA: o.TLS.CA, TLSCert: o.TLS.Cert, TLSKey: o.TLS.Key})
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	return bus.NewNATSTransport(nc, true), nil
}

// Signing reads job's keyring (keyringPath) and party's signer (an NKey
// seed given as credsPath); either may be empty, and a JWT creds file
// gives no signer. The keyring must be job's, and when both are given the
// keyring must list the signer's key for party: a party started with
// another party's seed fails here rather than having every envelope
// rejected by its peers.
func Signing(job, party, keyringPath, credsPath string) (*bus.Keyring, *bus.Signer, error) {
	var ring *bus.Keyring
	if keyringPath != "" {
		var err error
		if ring, err = bus.LoadKeyring(keyringPath); err != nil {
			return nil, nil, fmt.Errorf("deploy: signing %s: %w", party, err)
		}
		if ring.Job() != job {
			return nil, nil, fmt.Errorf("deploy: signing %s: keyring %s is job %s's, not %s's", party, keyringPath, ring.Job(), job)
		}
	}
	signer, err := bus.CredsSigner(party, credsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: signing %s: %w", party, err)
	}
	if ring != nil && signer != nil {
		p, ok := ring.Party(party)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("deploy: signing %s: keyring %s lists no party %s", party, keyringPath, party)
		case p.PublicKey != signer.PublicKey():
			return nil, nil, fmt.Errorf("deploy: signing %s: the seed %s is not %s's (its key %s is not the keyring's %s)",
				party, credsPath, party, signer.PublicKey(), p.PublicKey)
		}
	}
	return ring, signer, nil
}
