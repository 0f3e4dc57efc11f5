package aggregator

import (
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

// ServerConfig wires a Machine to a transport.
type ServerConfig struct {
	Job string
	// Round is the job's round policy and algorithm: every strategy runs
	// behind the same server.
	Round    Config
	InitSeed uint64          // shared model initialisation seed sent in hello replies
	Enrol    map[string]bool // clients allowed to join; nil: any valid id
	// MaxBytes rejects larger messages as "oversized"; 0: bus.DefaultMaxPayload.
	MaxBytes int
	// Pending bounds what NATS queues for the server's subscription and
	// Inbox its own queue per sender (flow.go, inbox.go); zero: derived
	// from the server's payload limit (bus.AggregatorPending,
	// InboxLimitsFor).
	Pending   bus.PendingLimits
	Inbox     InboxLimits
	TickEvery time.Duration // how often deadlines are checked; default 20ms
	// FinalWait bounds how long the server waits for clients' final metrics
	// after the job is done; default 10s.
	FinalWait time.Duration
	Now       func() time.Time // default time.Now
	Log       zerolog.Logger
	// OnRound, if set, is called with every close decision (progress
	// output); a personalizing strategy's mixing is in RoundClosed.Mix.
	OnRound func(RoundClosed)
	// Observer, if set, sees every step of the machine (metrics,
	// observer.go).
	Observer Observer
	// Store and Updates, both set, make the server durable (store.go,
	// recovery.go): updates come from the log instead of core NATS, a
	// checkpoint is stored after every step before its actions are carried
	// out, and Run resumes from the latest checkpoint. Both nil: nothing
	// survives a crash of the server.
	Store   Store
	Updates UpdateLog
	// Reannounce, when positive, publishes the latest model and the open
	// round again (done, once finished) after this long without news, then
	// at doubling intervals up to the round timeout. Core NATS keeps no
	// messages, so an announcement lost to a server restart or a node
	// failover would otherwise leave the clients idle until the deadline;
	// clients ignore repeats. 0: never.
	Reannounce time.Duration
	// Keyring, when set, requires every received envelope to carry its
	// sender's valid signature (bus.Schema.Keyring).
	Keyring *bus.Keyring
	// Signer, when set, signs every envelope the server sends; it must sign
	// as bus.AggregatorID, with the key the keyring lists for it.
	Signer *bus.Signer
	// Ledger, when set, is the aggregator's gate over the job's privacy
	// ledger (client privacy.AggregatorClient, signing with Signer's key):
	// the server appends its start, round and done records there
	// (records.go), and announces the latest. Nil: no records, and the
	// audit cannot tell a ledger that lost the tails of its chains.
	Ledger *privacy.Gate
	// Run is this run's id (bus.NewRunID), announced in every hello reply,
	// round opening and done; empty: a fresh one from Now. Hellos sent
	// before the run's start less HelloSkew are replays (HelloGuard);
	// HelloSkew 0 means DefaultHelloSkew, negative none.
	Run       string
	HelloSkew time.Duration
	// Lease is the job's run lease this run holds (AcquireLease), which a
	// durable server needs: it stores no checkpoint and publishes nothing
	// unless the lease is held, stops when it is lost, and announces the
	// runs that ended before it (Lease.Ended) so that their agents follow
	// it. Its owner releases it after Run. Run defaults to its run.
	Lease *Lease
	// StopWait bounds sending the stop notice when Run's context ends
	// (shutdown.go); default 2s.
	StopWait time.Duration
}

// Result is what a finished job reports.
type Result struct {
	Rounds   uint64
	Closes   []RoundClosed
	Final    map[string]map[string]float64 // client -> final scores
	PerRound map[uint64]map[string]map[string]float64
	Rejects  map[string]uint64
	// RejectsBy are the rejects charged to a sender whose signature
	// verified (the job's contract: schema, weight, norm), by sender and
	// reason; they are counted in Rejects too.
	RejectsBy map[string]map[string]uint64 `json:",omitempty"`
	Dropped   map[string]int               // by reason
	// SetAside sums the rounds' RoundClosed.SetAside per sender: what the
	// robust aggregation rule left out of each bank's updates.
	SetAside map[string]int `json:",omitempty"`
	// Flow is what the flow limits did: messages received and dropped per
	// sender by the bounded inbox, slow-consumer drops, connection events.
	Flow  FlowReport
	Model []float32 // the latest global model; nil when the strategy personalizes
	// Models are the latest models published: the global one, or each
	// client's latest personalized one (To), sorted by recipient.
	Models []PublishModel
	// Mixes are a personalizing strategy's mixing decisions, one per
	// closed round (RoundClosed.Mix), in order.
	Mixes []Mixed
	// Resumed says that a durable server resumed from a checkpoint, in
	// round ResumedRound (0: before the first round opened).
	Resumed      bool
	ResumedRound uint64
	// Deadlines are the adaptive deadline's changes, in order
	// (Config.DeadlineFactor); empty when the deadline does not adapt.
	Deadlines []DeadlineAdapted
	// Heads are the final ledger heads: those of the done record and the
	// aggregator's own (its done record), what an audit should expect
	// (privacy.AuditOptions.ExpectHeads); nil without a done record.
	Heads []privacy.Head `json:",omitempty"`
	// Run is the run's id; Stopped, when set, says why the run stopped
	// before the job finished (its context ended: SIGINT, SIGTERM), after
	// the agents were told so.
	Run     string
	Stopped string `json:",omitempty"`
	// SecAggRefused counts the secure-aggregation messages the rounds'
	// protocol refused, by sender and kind ("adv", "masked", "reveal",
	// with ":late" for lateness, which is no fault).
	SecAggRefused map[string]map[string]int `json:",omitempty"`
}

// noteSecAggRefused counts a refused protocol message.
func (r *Result) noteSecAggRefused(x SecAggRefused) {
	if r.SecAggRefused == nil {
		r.SecAggRefused = map[string]map[string]int{}
	}
	by := r.SecAggRefused[x.Client]
	if by == nil {
		by = map[string]int{}
		r.SecAggRefused[x.Client] = by
	}
	k := x.Kind
	if x.IsLate() {
		k += ":late"
	}
	by[k]++
}
