package operator

import (
	"context"
	"fmt"
	"io"

	"graphfed/bus"
	"graphfed/deploy"
)

// LedgerConfig is the ledger administrator's setup of a job's ledger:
// who connects where, and the job's keyring, whose parties get a stream
// each.
type LedgerConfig struct {
	NATS    string // server or cluster URL
	Creds   string // the ledger administrator's seed file (ledger-admin.nk)
	TLS     deploy.TLSFiles
	Keyring string // required
	// Job must be the keyring's; empty: the keyring's.
	Job      string
	Replicas int // stream replicas (3 on a 3-node cluster)
}

// DefaultLedgerConfig is `graphfed keys ledger` without flags.
func DefaultLedgerConfig() LedgerConfig {
	return LedgerConfig{NATS: "nats://127.0.0.1:4222", Replicas: 1}
}

// LedgerResult is the ledger CreateLedgerStreams made ready.
type LedgerResult struct {
	Job      string
	Streams  []string
	Replicas int
}

// WriteText writes the one line `graphfed keys ledger` prints.
func (r LedgerResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "ledger of job %s ready: %d streams (%d replicas), one per party\n", r.Job, len(r.Streams), r.Replicas)
	return err
}

// Metrics are the metrics of `graphfed keys ledger --json`.
func (r LedgerResult) Metrics() map[string]any {
	return map[string]any{"job": r.Job, "streams": r.Streams, "replicas": r.Replicas}
}

// CreateLedgerStreams creates, once before the job starts, one
// append-only stream per party of the job in the ledger account, as the
// ledger administrator, who operates the NATS servers and is no party of
// the job: no party may create, delete or purge a ledger stream. A
// party's seed is refused before anything connects.
func CreateLedgerStreams(ctx context.Context, cfg LedgerConfig) (LedgerResult, error) {
	r, err := createLedgerStreams(ctx, cfg)
	if err != nil {
		return LedgerResult{}, fmt.Errorf("keys ledger: %w", err)
	}
	return r, nil
}

func createLedgerStreams(ctx context.Context, cfg LedgerConfig) (LedgerResult, error) {
	ring, err := bus.LoadKeyring(cfg.Keyring)
	if err != nil {
		return LedgerResult{}, err
	}
	job := cfg.Job
	if job == "" {
		job = ring.Job()
	}
	if job != ring.Job() {
		return LedgerResult{}, fmt.Errorf("--job %s, but %s is the keyring of job %s", job, cfg.Keyring, ring.Job())
	}
	if kp, err := bus.LoadSeedFile(cfg.Creds); err == nil {
		pub, _ := kp.PublicKey()
		kp.Wipe()
		for _, p := range ring.Parties() {
			if p.PublicKey == pub {
				return LedgerResult{}, fmt.Errorf("--creds %s is the seed of %s, a party of the job; the ledger streams are the ledger administrator's to create (%s.nk)",
					cfg.Creds, p.ID, bus.LedgerAdminID)
			}
		}
	}
	nc, err := bus.Connect(cfg.NATS, bus.ConnectOptions{Name: "graphfed-keys-ledger-" + job, Creds: cfg.Creds,
		TLSCA: cfg.TLS.CA, TLSCert: cfg.TLS.Cert, TLSKey: cfg.TLS.Key})
	if err != nil {
		return LedgerResult{}, err
	}
	defer nc.Close()
	if !nc.IsConnected() {
		return LedgerResult{}, fmt.Errorf("--nats %s: no server reachable, or the credentials were refused", cfg.NATS)
	}
	names, err := deploy.CreateLedgerStreams(ctx, nc, ring, cfg.Replicas)
	if err != nil {
		return LedgerResult{}, fmt.Errorf("%w (are these the ledger administrator's credentials, %s.nk?)", err, bus.LedgerAdminID)
	}
	return LedgerResult{Job: job, Streams: names, Replicas: cfg.Replicas}, nil
}
