package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/telemetry"
)

// AggregatorOptions are everything a job's aggregator is built from.
type AggregatorOptions struct {
	Job  string
	Task string // with Round.Algo, a pair CheckTaskAlgo accepts
	Conn ConnOptions
	// Keyring is the job's keyring.json: every envelope received must carry
	// its sender's valid signature. Conn.Creds, when the aggregator's NKey
	// seed, signs every envelope sent.
	Keyring string
	// Durable checkpoints to JetStream and reads updates from the job's
	// update stream, so that a restarted aggregator resumes the job.
	Durable  bool
	Recovery DurableOptions // with Durable; zero fields take DefaultDurable's
	Round    aggregator.Config
	// SecAggIDs are a plain in-process job's identities for secure
	// aggregation (Local fills them in); a job on a keyring signs with
	// the aggregator's key.
	SecAggIDs *SecAggIdentities
	InitSeed  uint64   // shared model initialisation seed sent in hello replies
	Enrol     []string // clients allowed to join; empty: any valid id
	// CreateLedger creates the job's ledger stream before the job starts
	// (in a permissioned deployment only the aggregator may).
	CreateLedger bool
	FinalWait    time.Duration // bound on waiting for final metrics; 0: 10s
	MaxBytes     int           // largest message accepted; 0: bus.DefaultMaxPayload
	Log          zerolog.Logger
	Now          func() time.Time // nil: time.Now
	OnRound      func(aggregator.RoundClosed)
	// Transport, when set, is used instead of dialling Conn; the caller
	// closes it.
	Transport *bus.NATSTransport
	// WrapStore, with Durable, wraps the checkpoint store (the recovery
	// scenarios crash the aggregator at a chosen write).
	WrapStore func(aggregator.Store) aggregator.Store
	// Resume continues a job that ran before (rerun.go): a durable job
	// from its checkpoint, the banks' budgets carried over and stated.
	// Without it a job id that left ledger entries or a checkpoint is
	// refused (ErrRerun). With nothing to continue the job starts afresh.
	Resume bool
	// HelloSkew is the clock skew allowed to agents' hellos
	// (aggregator.ServerConfig.HelloSkew); 0: the default.
	HelloSkew time.Duration
	// Blobs say how models too large to go inline travel; with a keyring
	// the aggregator creates every bank's blob bucket at its start.
	Blobs BlobOptions
	// Metrics, when set, records the aggregator's live metrics
	// (telemetry); nil: none.
	Metrics *telemetry.Metrics
}

// Validate checks the options without touching the network.
func (o AggregatorOptions) Validate() error {
	var errs []error
	if !bus.ValidID(o.Job) {
		errs = append(errs, fmt.Errorf("job %q is not [a-z0-9-]{1,64}", o.Job))
	}
	if err := CheckTaskAlgo(o.Task, o.Round.Algo); err != nil {
		errs = append(errs, err)
	} else if err := o.Round.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, c := range o.Enrol {
		if !bus.ValidID(c) || c == bus.AggregatorID || c == "all" {
			errs = append(errs, fmt.Errorf("enrolled client %q is not a valid agent id", c))
		}
	}
	if r := o.Recovery; r.Replicas < 0 || r.Replicas > 5 || r.AckWait < 0 {
		errs = append(errs, fmt.Errorf("durable options %+v: replicas must be 0 to 5 and the ack wait not negative", r))
	}
	if o.Transport == nil && o.Conn.URL == "" {
		errs = append(errs, errors.New("no NATS URL"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deploy: aggregator of %s: %w", o.Job, err)
	}
	return nil
}

// Aggregator is a job's aggregator party: the round server with its
// transport and, when durable, its JetStream store.
type Aggregator struct {
	srv     *aggregator.Server
	prior   PriorRun
	carried []Carried
	tr      *bus.NATSTransport
	ownTr   bool
	closed  bool
	events  *bus.ConnEvents
	lease   *heldLease // durable: the job's run lease (lease.go)
}

// NewAggregator validates o, connects, loads the keyring and signer, opens
// the durable store when asked, and builds the round server; Run starts it.
func NewAggregator(ctx context.Context, o AggregatorOptions) (_ *Aggregator, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Aggregator, error) {
		return nil, fmt.Errorf("deploy: aggregator of %s: %w", o.Job, err)
	}
	ring, signer, err := Signing(o.Job, bus.AggregatorID, o.Keyring, o.Conn.Creds)
	if err != nil {
		return fail(err)
	}
	if o.Round.SecAgg.On {
		o.Round.SecAgg.Job = o.Job
		if o.Round.SecAgg.Signer, o.Round.SecAgg.Verifier, err = secAggIdentity(bus.AggregatorID, ring, signer, o.SecAggIDs); err != nil {
			return fail(err)
		}
	}
	a := &Aggregator{tr: o.Transport}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.tr == nil {
		if o.Conn.Name == "" {
			o.Conn.Name = "aggregator-" + o.Job
		}
		if o.Conn.Events == nil {
			o.Conn.Events = bus.NewConnEvents(bus.AggregatorID, o.Log)
		}
		a.events = o.Conn.Events
		if a.tr, err = Conn(o.Conn); err != nil {
			return fail(err)
		}
		a.ownTr = true
	}
	var dur durableParts
	if o.Durable {
		if dur, err = openDurable(ctx, a.tr, o, o.Recovery); err != nil {
			return fail(err)
		}
		a.lease = dur.lease
	}
	accounts, err := accountsLayout(ctx, a.tr.Conn(), o.Job, bus.AggregatorID)
	if err != nil {
		return fail(fmt.Errorf("deploy: aggregator: %w", err))
	}
	switch {
	case accounts:
		// The ledger administrator made the streams; a job without them
		// fails here, before it announces anything, rather than at its
		// first release.
		if _, err := bus.OpenJetStreamLedger(ctx, a.tr.Conn(), o.Job, bus.JSLedgerOptions{ReadOnly: true, Parties: []string{bus.AggregatorID}}); err != nil {
			return fail(fmt.Errorf("deploy: aggregator: %w", err))
		}
	case o.CreateLedger:
		if err := EnsureLedgerStream(ctx, a.tr, o.Job, o.Recovery.Replicas); err != nil {
			return fail(err)
		}
	}
	ensureBlobBuckets(ctx, a.tr, o.Job, accounts, o.Blobs, o.Log)
	if err := attachBlobs(a.tr, o.Job, bus.AggregatorID, o.Blobs, accounts); err != nil {
		return fail(err)
	}
	cfg := serverConfig(o, ring, signer)
	cfg.Observer = observeAggregator(o.Metrics, a.tr, a.events)
	if o.Durable {
		cfg.Store, cfg.Updates, cfg.Lease = dur.store, dur.updates, dur.lease.Lease
		if o.WrapStore != nil {
			cfg.Store = o.WrapStore(cfg.Store)
		}
	}
	if a.prior, err = findPriorRun(ctx, a.tr, o.Job, accounts, ring, cfg.Store); err != nil {
		return fail(err)
	}
	if err := checkRerun(o.Job, a.prior, o.Resume, o.Durable); err != nil {
		return fail(err)
	}
	if a.prior.Any() {
		l := o.Log.Info().Str("job", o.Job).Uint64("ledger_entries", a.prior.LedgerEntries).Bool("checkpoint", a.prior.Checkpoint)
		if accounts {
			// Need-to-know: the banks' ledger streams are theirs and the
			// auditor's; each bank's gate carries its own budget on.
			o.Log.Info().Str("job", o.Job).Msg("resuming: the banks' spent budgets are in their own ledger streams, which only they and the auditor read")
		} else if a.carried, err = carriedBudgets(ctx, a.tr, o.Job); err != nil {
			o.Log.Warn().Err(err).Str("job", o.Job).Msg("resuming: the budgets spent so far could not be accounted from the ledger (the banks' gates hold them)")
		}
		for _, c := range a.carried {
			l = l.Dict(c.Client, zerolog.Dict().Uint64("releases", c.Releases).Float64("epsilon", c.Epsilon))
		}
		l.Msg("resuming the job: budgets carried over from the ledger (RDP, δ=1e-4; the audit has every channel)")
	} else if o.Resume {
		o.Log.Info().Str("job", o.Job).Msg("--resume: the job has not run before; starting it")
	}
	// Its round records make a ledger that lost the tails of its chains
	// evident to the audit (aggregator_ledger.go).
	if cfg.Ledger, err = AggregatorLedger(ctx, a.tr, o.Job, ring, signer, o.Now, o.Log); err != nil {
		return fail(err)
	}
	// The one call that follows the aggregator package's constructor.
	if a.srv, err = aggregator.NewServer(cfg.ServerConfig, a.tr); err != nil {
		return fail(err)
	}
	if o.Metrics != nil {
		o.Metrics.WatchRejects(bus.AggregatorID, a.srv.Validator().Rejects)
		o.Metrics.WatchInbox(bus.AggregatorID, a.srv.InboxStats)
	}
	return a, nil
}

// serverPlan is the round server's configuration and the durable options
// its store is opened with, defaults filled in.
type serverPlan struct {
	aggregator.ServerConfig
	recovery DurableOptions
}

// serverConfig maps the options onto the round server's configuration
// (without the durable store, which needs the network).
func serverConfig(o AggregatorOptions, ring *bus.Keyring, signer *bus.Signer) serverPlan {
	rec := o.Recovery
	def := DefaultDurable()
	if rec.Replicas == 0 {
		rec.Replicas = def.Replicas
	}
	if rec.AckWait == 0 {
		rec.AckWait = def.AckWait
	}
	if rec.Reannounce == 0 {
		rec.Reannounce = def.Reannounce
	}
	var enrol map[string]bool
	if len(o.Enrol) > 0 {
		enrol = make(map[string]bool, len(o.Enrol))
		for _, c := range o.Enrol {
			enrol[c] = true
		}
	}
	cfg := aggregator.ServerConfig{Job: o.Job, Round: o.Round, InitSeed: o.InitSeed, Enrol: enrol,
		FinalWait: o.FinalWait, MaxBytes: o.MaxBytes, Now: o.Now, Log: o.Log, OnRound: o.OnRound, Keyring: ring, Signer: signer,
		HelloSkew: o.HelloSkew}
	if o.Durable {
		// Reannouncing only helps a server whose state survives; a plain
		// one has nothing to announce after a restart.
		cfg.Reannounce = max(rec.Reannounce, 0)
	}
	return serverPlan{ServerConfig: cfg, recovery: rec}
}

// Run runs the job's rounds until the job is done or ctx ends.
// The result's Flow.Conn counts the connection's events.
func (a *Aggregator) Run(ctx context.Context) (aggregator.Result, error) {
	r, err := a.srv.Run(ctx)
	a.releaseLease(ctx)
	r.Flow.Conn = a.events.Counts()
	return r, err
}

// Prior is what earlier runs of the job left (nothing unless resumed).
func (a *Aggregator) Prior() PriorRun { return a.prior }

// Carried are the banks' budgets a resumed job carried over, by client.
func (a *Aggregator) Carried() []Carried { return a.carried }

// Server is the round server (round scores for progress output).
func (a *Aggregator) Server() *aggregator.Server { return a.srv }

// Transport is the aggregator's connection (traffic counters).
func (a *Aggregator) Transport() *bus.NATSTransport { return a.tr }

// BlobStats count the models the aggregator sent and the updates it read
// by reference.
func (a *Aggregator) BlobStats() bus.BlobStats { return blobStats(a.tr) }

// Close releases the connection unless the caller gave it.
func (a *Aggregator) Close() error {
	a.releaseLease(context.Background())
	if a.closed || !a.ownTr || a.tr == nil {
		return nil
	}
	a.closed = true
	return a.tr.Close()
}
