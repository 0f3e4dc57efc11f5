package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"graphfed/bus"
	"graphfed/privacy"
)

// LocalOptions describe a job's NATS environment on this machine.
type LocalOptions struct {
	Job   string
	Banks []string // the agents' ids; Secure makes a key for each
	// Secure generates the job's keys (aggregator, every bank, auditor), its
	// keyring and a nats-server configuration with per-party permissions in
	// a temporary directory, and starts the embedded server from that
	// configuration: every party then logs in with its own key, may do only
	// what its role allows, and signs what it sends.
	Secure bool
	// URL names an external server or cluster: no server is started. Not
	// with Secure (the fresh keys would be unknown to it).
	URL string
	// StoreDir is the embedded server's JetStream store; empty: a temporary
	// directory removed by Close.
	StoreDir string
	// Size is the job's model size, which sets the secure configuration's
	// payload limit as `graphfed keys` sets it (bus.JobSize.PayloadLimit);
	// zero: keys' defaults (bus.DefaultJobSize).
	Size bus.JobSize
	// MaxPayload, when set, is the embedded server's payload limit instead
	// of the one Size gives (in secure mode) or the default: a limit below
	// the job's models sends them by reference (bus.BlobRef).
	MaxPayload int
	// InProcess connects the parties built from this environment to the
	// embedded server through in-memory pipes instead of sockets: one
	// process then holds as many parties as memory allows, not as many as
	// its file-descriptor limit (two per TCP connection). Ignored with URL.
	InProcess bool
	// SecAgg lays out secure aggregation's subjects in a secure
	// configuration (bus.AccountOptions.SecAgg), and on a plain server
	// makes in-memory identities for its signatures (SecAggIdentities).
	SecAgg bool
}

// Local is a job's NATS environment: an embedded server (plain or secure)
// or an external one, the job's ledger stream, and in secure mode every
// party's seed file and the keyring. Parties built with Conn(id) and
// KeyringPath() run under it.
type Local struct {
	job     string
	url     string
	srv     *bus.Server
	dir     string // temporary: keys, configuration, store
	ring    *bus.Keyring
	keyring string            // keyring.json in dir
	creds   map[string]string // party id → seed file
	inproc  bool
	secagg  bool
	saIDs   *SecAggIdentities // a plain job's in-memory identities
}

// StartLocal starts the environment. In secure mode the job's ledger
// stream is created with the aggregator's key (banks may not define it);
// on a plain embedded server it is created too, so that every run starts
// the same way.
func StartLocal(ctx context.Context, o LocalOptions) (_ *Local, err error) {
	if !bus.ValidID(o.Job) {
		return nil, fmt.Errorf("deploy: local: job %q is not [a-z0-9-]{1,64}", o.Job)
	}
	if o.Secure && o.URL != "" {
		return nil, errors.New("deploy: local: secure mode starts its own server; it cannot use the external " + o.URL)
	}
	l := &Local{job: o.Job, url: o.URL, creds: map[string]string{}, inproc: o.InProcess && o.URL == "", secagg: o.SecAgg}
	if o.SecAgg && !o.Secure {
		if l.saIDs, err = NewSecAggIdentities(o.Job, o.Banks); err != nil {
			return nil, err
		}
	}
	if o.URL != "" {
		return l, nil
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.dir, err = os.MkdirTemp("", "graphfed-"+o.Job+"-"); err != nil {
		return nil, fmt.Errorf("deploy: local: %w", err)
	}
	store := o.StoreDir
	if store == "" {
		store = filepath.Join(l.dir, "js")
	}
	so := bus.ServerOptions{StoreDir: store, MaxPayload: int32(o.MaxPayload)}
	if o.Secure {
		if so.ConfigFile, err = l.writeKeys(o.Banks, store, o.Size, o.MaxPayload); err != nil {
			return nil, err
		}
		so.Port = -1 // the configuration's listen port is a placeholder
	}
	if l.srv, err = bus.StartServer(so); err != nil {
		return nil, fmt.Errorf("deploy: local: %w", err)
	}
	l.url = l.srv.ClientURL()
	if l.ring != nil {
		// The ledger administrator's one act, as `graphfed keys ledger`.
		tr, err := Conn(l.Conn(bus.LedgerAdminID))
		if err != nil {
			return nil, fmt.Errorf("deploy: local: %w", err)
		}
		defer tr.Close()
		if _, err := CreateLedgerStreams(ctx, tr.Conn(), l.ring, 1); err != nil {
			return nil, fmt.Errorf("deploy: local: %w", err)
		}
		return l, nil
	}
	tr, err := Conn(l.Conn(bus.AggregatorID))
	if err != nil {
		return nil, fmt.Errorf("deploy: local: %w", err)
	}
	defer tr.Close()
	if err := EnsureLedgerStream(ctx, tr, o.Job, 1); err != nil {
		return nil, fmt.Errorf("deploy: local: %w", err)
	}
	return l, nil
}

// writeKeys writes every party's seed file, the keyring and the server
// configuration into l.dir, as `graphfed keys` would, and returns the
// configuration's path.
func (l *Local) writeKeys(banks []string, store string, size bus.JobSize, payload int) (string, error) {
	if size == (bus.JobSize{}) {
		size = bus.DefaultJobSize()
	}
	if payload == 0 {
		var err error
		if payload, err = size.PayloadLimit(); err != nil {
			return "", fmt.Errorf("deploy: local: %w", err)
		}
	}
	dep, err := bus.NewDeployment(l.job, banks)
	if err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	if l.ring, err = dep.Keyring(); err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	for _, c := range append(dep.Creds, dep.LedgerAdmin) {
		path := filepath.Join(l.dir, c.ID+".nk")
		if err := bus.WriteSeedFile(path, l.job, c); err != nil {
			return "", fmt.Errorf("deploy: local: %w", err)
		}
		l.creds[c.ID] = path
	}
	manifest, err := l.ring.Encode()
	if err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	l.keyring = filepath.Join(l.dir, "keyring.json")
	if err := os.WriteFile(l.keyring, manifest, 0o644); err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	conf, err := bus.ServerConfig(l.ring, bus.ServerConfigOptions{Listen: "127.0.0.1:4222", StoreDir: store, MaxPayload: payload,
		LedgerAdmin: dep.LedgerAdmin.PublicKey, SecAgg: l.secagg})
	if err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	path := filepath.Join(l.dir, "server.conf")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return "", fmt.Errorf("deploy: local: %w", err)
	}
	return path, nil
}

// Job is the environment's job.
func (l *Local) Job() string { return l.job }

// URL is the server's client URL.
func (l *Local) URL() string { return l.url }

// Secure reports whether parties log in with keys under permissions.
func (l *Local) Secure() bool { return l.ring != nil }

// Keyring is the job's keyring; nil unless secure.
func (l *Local) Keyring() *bus.Keyring { return l.ring }

// KeyringPath is the job's keyring.json; empty unless secure.
func (l *Local) KeyringPath() string { return l.keyring }

// Creds is party's seed file (bus.AggregatorID, a bank id,
// bus.AuditorID or bus.LedgerAdminID); empty unless secure.
func (l *Local) Creds(party string) string { return l.creds[party] }

// Conn is how party connects: the URL and, when secure, its own seed.
func (l *Local) Conn(party string) ConnOptions {
	o := ConnOptions{URL: l.url, Creds: l.creds[party], Name: l.job + "-" + party}
	if l.inproc && l.srv != nil {
		o.InProcess = l.srv.NATS()
	}
	return o
}

// AgentOptions returns o with the connection and keyring of agent o.ID in
// this environment.
func (l *Local) AgentOptions(o AgentOptions) AgentOptions {
	o.Conn, o.Keyring, o.SecAggIDs = l.Conn(o.ID), l.keyring, l.saIDs
	return o
}

// AggregatorOptions returns o with the aggregator's connection and the
// keyring of this environment.
func (l *Local) AggregatorOptions(o AggregatorOptions) AggregatorOptions {
	o.Conn, o.Keyring, o.SecAggIDs = l.Conn(bus.AggregatorID), l.keyring, l.saIDs
	return o
}

// Server is the embedded server; nil with an external URL.
func (l *Local) Server() *bus.Server { return l.srv }

// LedgerEntries reads the job's whole privacy ledger, as the auditor when
// secure: the entries that verify (against the keyring when secure).
func (l *Local) LedgerEntries(ctx context.Context) ([]privacy.Entry, error) {
	rd, err := l.LedgerReading(ctx)
	return rd.Entries, err
}

// LedgerReading reads and verifies the job's whole privacy ledger, as the
// auditor when secure, with what was skipped and flagged.
func (l *Local) LedgerReading(ctx context.Context) (privacy.Reading, error) {
	tr, err := Conn(l.Conn(bus.AuditorID))
	if err != nil {
		return privacy.Reading{}, fmt.Errorf("deploy: local: ledger: %w", err)
	}
	defer tr.Close()
	led, err := OpenAuditLedger(ctx, tr.Conn(), l.job, l.ring)
	if err != nil {
		return privacy.Reading{}, fmt.Errorf("deploy: local: ledger: %w", err)
	}
	rd, err := privacy.ReadLedger(ctx, led, privacy.VerifyOptions{Keys: LedgerKeys(l.ring), Job: l.job})
	if err != nil {
		return privacy.Reading{}, fmt.Errorf("deploy: local: ledger: %w", err)
	}
	return rd, nil
}

// Close stops the embedded server and removes the temporary directory with
// the keys.
func (l *Local) Close() error {
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv = nil
	}
	if l.dir != "" {
		dir := l.dir
		l.dir = ""
		return os.RemoveAll(dir)
	}
	return nil
}
