package deploy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
	"graphfed/telemetry"
)

// AgentOptions are everything one organisation's agent is built from.
type AgentOptions struct {
	Job, ID    string
	Task, Algo string // a pair CheckTaskAlgo accepts; Algo decides the embedding exchange
	Conn       ConnOptions
	// Keyring is the job's keyring.json: every envelope received must then
	// carry its sender's valid signature. Conn.Creds, when an NKey seed,
	// signs every envelope sent.
	Keyring string
	// Durable publishes updates to the job's JetStream update stream, for an
	// aggregator with Durable set.
	Durable bool
	Privacy PrivacyOptions
	// SecAgg takes part in the secure aggregation of the rounds that
	// announce one, signing with the agent's key (or SecAggIDs, a plain
	// in-process job's identities, which Local fills in).
	SecAgg    bool
	SecAggIDs *SecAggIdentities
	// Learner is the agent's learner when the caller built it (the
	// simulation hands in learners over data split in memory); nil builds
	// it from Data with NewLearner.
	Learner learner.Learner
	// Data is the organisation's data directory and learner settings, read
	// when Learner is nil. An AML bank directory names its bank: ID may
	// then be empty and is taken from it, and must otherwise match it.
	Data LearnerOptions
	// LocalEpochs per round (0: 1); EvalEvery scores the starting model
	// every this many rounds (0: 1; negative: the final model only).
	LocalEpochs, EvalEvery int
	HelloRetry             time.Duration // between hello attempts; 0: 1s
	Slowdown               time.Duration // extra delay per round (a slow bank, for experiments)
	SlowFactor             float64       // > 1: that many times slower than the hardware; 0: normal
	Log                    zerolog.Logger
	Now                    func() time.Time // nil: time.Now
	// Transport, when set, is used instead of dialling Conn (a caller that
	// injects faults or shares a connection); the caller closes it.
	Transport *bus.NATSTransport
	// WrapTransport, when set, wraps what the agent sends and receives on
	// (fault injection: a scenario that drops or rewrites one bank's
	// messages on the real server, through the agent's own wiring).
	WrapTransport func(bus.Transport) bus.Transport
	// Blobs say how updates too large to go inline travel.
	Blobs BlobOptions
	// Metrics, when set, records the agent's live metrics (telemetry),
	// labelled with its id; nil: none.
	Metrics *telemetry.Metrics
}

// Validate checks the options without touching the network.
func (o AgentOptions) Validate() error {
	var errs []error
	if !bus.ValidID(o.Job) {
		errs = append(errs, fmt.Errorf("job %q is not [a-z0-9-]{1,64}", o.Job))
	}
	idFromData := o.ID == "" && o.Learner == nil && o.Task == TaskAML
	if !idFromData && (!bus.ValidID(o.ID) || o.ID == bus.AggregatorID || o.ID == "all" || o.ID == bus.AuditorID) {
		errs = append(errs, fmt.Errorf("agent id %q is not [a-z0-9-]{1,64} or is reserved", o.ID))
	}
	if err := CheckTaskAlgo(o.Task, o.Algo); err != nil {
		errs = append(errs, err)
	}
	if err := o.Privacy.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.Learner == nil && o.Data.Dir == "" {
		errs = append(errs, errors.New("no learner and no data directory"))
	}
	if o.LocalEpochs < 0 || o.HelloRetry < 0 || o.Slowdown < 0 {
		errs = append(errs, errors.New("local epochs, hello retry and slowdown must not be negative"))
	}
	if math.IsNaN(o.SlowFactor) || o.SlowFactor < 0 {
		errs = append(errs, fmt.Errorf("slow factor %v must be 0 or positive", o.SlowFactor))
	}
	if o.Transport == nil && o.Conn.URL == "" {
		errs = append(errs, errors.New("no NATS URL"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deploy: agent %s: %w", o.ID, err)
	}
	return nil
}

// Agent is one organisation's party: the agent with its transport, gate
// and ledger.
type Agent struct {
	id          string
	stats       map[string]any
	counters    func() map[string]any
	agent       *agent.Agent
	tr          *bus.NATSTransport
	ownTr       bool
	gate        *privacy.Gate
	closeLedger func() error
	closed      bool
	events      *bus.ConnEvents
	// learner and privacy are what the job's contract is read off in a
	// job built on one machine (StartJob).
	learner learner.Learner
	privacy PrivacyOptions
}

// NewAgent validates o, builds the learner from o.Data unless given one,
// connects, loads the keyring and signer, opens the ledger and the gate,
// and builds the agent; Run starts it.
func NewAgent(ctx context.Context, o AgentOptions) (_ *Agent, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var (
		stats    map[string]any
		counters func() map[string]any
	)
	if o.Learner == nil {
		l, err := BuildLearner(o.Task, o.Algo, Data{Dir: o.Data.Dir}, o.Data, Party{ID: o.ID, Seed: o.Data.Seed}, o.Log.With().Str("client", o.ID).Logger())
		if err != nil {
			return nil, fmt.Errorf("deploy: agent %s: %w", o.ID, err)
		}
		switch {
		case o.ID == "":
			o.ID = l.ID
		case l.ID != "" && l.ID != o.ID:
			return nil, fmt.Errorf("deploy: agent %s: %s holds the data of %s: run it as client %s", o.ID, o.Data.Dir, l.ID, l.ID)
		}
		o.Learner, stats, counters = l.Learner, l.Stats, l.Counters
	}
	fail := func(err error) (*Agent, error) { return nil, fmt.Errorf("deploy: agent %s: %w", o.ID, err) }
	ring, signer, err := Signing(o.Job, o.ID, o.Keyring, o.Conn.Creds)
	if err != nil {
		return fail(err)
	}
	var sa agent.SecAggConfig
	if o.SecAgg {
		if sa.Signer, sa.Verifier, err = secAggIdentity(o.ID, ring, signer, o.SecAggIDs); err != nil {
			return fail(err)
		}
		if o.Privacy.NoiseSeed != nil {
			// A seeded simulation (its noise seeded, marked non-private)
			// seeds its protocol randomness too, so that its rounding,
			// and so its model, is reproducible.
			sa.Rand = secAggSeeded(*o.Privacy.NoiseSeed)
		}
	}
	a := &Agent{id: o.ID, stats: stats, counters: counters, tr: o.Transport, closeLedger: func() error { return nil },
		learner: o.Learner, privacy: o.Privacy}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.tr == nil {
		if o.Conn.Name == "" {
			o.Conn.Name = "agent-" + o.ID
		}
		if o.Conn.Events == nil {
			o.Conn.Events = bus.NewConnEvents(o.ID, o.Log)
		}
		a.events = o.Conn.Events
		if a.tr, err = Conn(o.Conn); err != nil {
			return fail(err)
		}
		a.ownTr = true
	}
	accounts, err := accountsLayout(ctx, a.tr.Conn(), o.Job, o.ID)
	if err != nil {
		return fail(fmt.Errorf("deploy: agent %s: %w", o.ID, err))
	}
	if err := attachBlobs(a.tr, o.Job, o.ID, o.Blobs, accounts); err != nil {
		return fail(err)
	}
	ledger, closeLedger, err := Ledger(ctx, o.Job, o.ID, o.Privacy, a.tr, ring)
	if err != nil {
		return fail(err)
	}
	a.closeLedger = closeLedger
	observed, observer := observeAgent(o.Metrics, o.ID, a.tr, a.events, ledger)
	if ledger, err = retryAppends(observed, ledger, o.Job, o.ID, o.Now, o.Log, o.Metrics); err != nil {
		return fail(err)
	}
	if a.gate, err = Gate(ctx, o.Job, o.ID, o.Privacy, ledger, o.Now, ring, signer); err != nil {
		return fail(err)
	}
	logLedgerReading(o.Log.With().Str("client", o.ID).Logger(), a.gate.Reading())
	out, err := agentTransport(a.tr, o.Job, o.Durable)
	if err != nil {
		return fail(err)
	}
	if o.WrapTransport != nil {
		out = o.WrapTransport(out)
	}
	// The one call that follows the agent package's constructor.
	cfg := agentConfig(o, ring, signer)
	cfg.SecAgg = sa
	cfg.Observer = observer
	if a.agent, err = agent.New(cfg, out, o.Learner, a.gate); err != nil {
		return fail(err)
	}
	if o.Metrics != nil {
		o.Metrics.WatchRejects(o.ID, a.agent.Validator().Rejects)
		o.Metrics.WatchInbox(o.ID, a.agent.InboxStats)
		o.Metrics.WatchGate(o.ID, a.gate)
	}
	return a, nil
}

// agentConfig maps the options onto the agent's configuration. Today's
// agent switches the embedding exchange off with a negative σ0; that
// convention stays here, behind the algorithm.
func agentConfig(o AgentOptions, ring *bus.Keyring, signer *bus.Signer) agent.Config {
	emb := o.Privacy.EmbSigma
	if !ExchangesEmbeddings(o.Algo) {
		emb = -1
	}
	return agent.Config{Job: o.Job, Client: o.ID, Algo: o.Algo, LocalEpochs: o.LocalEpochs, EvalEvery: o.EvalEvery,
		HelloRetry: o.HelloRetry, Slowdown: o.Slowdown, SlowFactor: o.SlowFactor, Now: o.Now,
		Log:        o.Log.With().Str("client", o.ID).Logger(),
		ModelSigma: o.Privacy.ModelSigma, ModelClip: o.Privacy.ModelClip, GradSigma: o.Privacy.GradSigma, EmbSigma: emb,
		DescriptorSigma: o.Privacy.DescriptorSigma, Keyring: ring, Signer: signer}
}

// agentTransport is what the agent publishes on: tr, or with durable its
// JetStream wrapper that stores updates in the job's update stream.
func agentTransport(tr *bus.NATSTransport, job string, durable bool) (bus.Transport, error) {
	if !durable {
		return tr, nil
	}
	return bus.NewDurableTransport(tr, job)
}

// ID is the agent's client id.
func (a *Agent) ID() string { return a.id }

// DataStats describe the data the agent's learner was built from (nil
// when the caller gave the learner).
func (a *Agent) DataStats() map[string]any { return a.stats }

// Counters are the learner's figures of the run so far (an AML bank's
// received boundary embeddings); nil when it keeps none.
func (a *Agent) Counters() map[string]any {
	if a.counters == nil {
		return nil
	}
	return a.counters()
}

// Run runs the agent until the job is done or ctx ends.
func (a *Agent) Run(ctx context.Context) (agent.Result, error) { return a.agent.Run(ctx) }

// Gate is the agent's privacy gate (spending so far).
func (a *Agent) Gate() *privacy.Gate { return a.gate }

// Transport is the agent's connection (traffic counters).
func (a *Agent) Transport() *bus.NATSTransport { return a.tr }

// Close releases the ledger and, unless the caller gave it, the connection.
func (a *Agent) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	err := a.closeLedger()
	if a.ownTr && a.tr != nil {
		err = errors.Join(err, a.tr.Close())
	}
	return err
}

// Inbox is the agent's inbox counters so far: what it received, dropped
// and held per sender (agent.InboxReport).
func (a *Agent) Inbox() agent.InboxReport { return a.agent.InboxReport() }

// BlobStats count the bodies the agent sent and read by reference.
func (a *Agent) BlobStats() bus.BlobStats { return blobStats(a.tr) }

// ConnCounts are the agent's connection events so far: slow-consumer
// drops, disconnects, reconnects (zero for a transport the caller gave).
func (a *Agent) ConnCounts() bus.ConnCounts { return a.events.Counts() }
