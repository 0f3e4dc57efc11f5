package agent

import (
	"time"

	"graphfed/bus"
	"graphfed/privacy"
)

// MachineEvent is an input to Machine.Step. Time enters only as the Now
// field of events: the machine reads no clock.
type MachineEvent interface{ isMachineEvent() }

// Start boots the agent, or restarts it after a Crash: the privacy gate is
// rebuilt from the ledger (so spent budgets survive), the last round
// released on each channel is recovered from it, and a hello goes out.
// Incarnation numbers the boots (0 for the first), for the driver's logs;
// noise does not depend on it (privacy.Config.Seed derives every release's
// stream from what it releases).
type Start struct {
	Now         time.Time
	Incarnation uint64
}

// Crash loses everything but the ledger and the local data: the learner's
// parameters, the latest global model, the join.
type Crash struct{}

// JoinReply is the aggregator's answer to a hello.
type JoinReply struct {
	Accepted bool
	Reason   string
	Round    uint64 // the round open at the aggregator, 0 if none
	Algo     string
	InitSeed uint64
	// Reannounced says the aggregator announces its open round again (with
	// the model to start from) after a join, as the NATS server does: the
	// machine waits for that RoundOpened rather than train Round at once
	// from the initial model.
	Reannounced bool
	// Anchor is the aggregator's latest ledger record (bus.HelloReply
	// Anchor): the agent's next entries name it. Zero: none.
	Anchor privacy.Ref
	Now    time.Time
}

// RoundOpened is a round opening: train for Round, starting from the model
// of ModelRound.
type RoundOpened struct {
	Round      uint64
	ModelRound uint64
	Deadline   time.Time
	// Payload is the strategy payload of the round (LPSFed: a msgpack
	// bus.LPSFedRound), handed to a RoundPayloadReceiver learner.
	Payload []byte
	// Superseded says the driver holds a newer round opening already: a
	// bank that fell behind trains for the newest round only, since
	// working through every missed round would make each update staler
	// than the last.
	Superseded bool
	// Anchor is the aggregator's record of the round that closed before
	// this one opened (bus.RoundOpen.Anchor), as JoinReply.Anchor.
	Anchor privacy.Ref
	// SecAgg is the round's secure aggregation (bus.RoundOpen.SecAgg),
	// nil when updates travel in the clear.
	SecAgg *bus.SecAggRound
	// SecureJob: the job aggregates securely (bus.RoundOpen.SecureJob).
	SecureJob bool
	Now       time.Time
}

// ModelIn is a global or personalized model (or one resent to this agent
// after a join).
type ModelIn struct {
	Round  uint64
	Params []float32
	Grad   []float32
	// Margin, when HasMargin, is LPSFed's personalized margin.
	Margin    float64
	HasMargin bool
	// Mix: Params is the global θ̄, to mix with RhoBar and the agent's own
	// released parameters of Round (bus.Model.Mix).
	Mix    bool
	RhoBar float64
	Final  bool
	Now    time.Time
}

// EmbeddingsIn is a neighbour's released boundary embeddings (rows is
// len(IDs)×Dim, row-major).
type EmbeddingsIn struct {
	From  string
	Round uint64
	IDs   []int64
	Rows  []float32
	Dim   int
	Now   time.Time
}

// MachineTick advances time: an unanswered hello is retried.
type MachineTick struct{ Now time.Time }

// JobDone says the aggregator finished the job: the machine scores the
// final model and reports Finished.
// Anchor is the aggregator's latest record (bus.Done.Anchor), which the
// final calibration names.
type JobDone struct {
	Anchor privacy.Ref
	Now    time.Time
}

func (Start) isMachineEvent()        {}
func (Crash) isMachineEvent()        {}
func (JoinReply) isMachineEvent()    {}
func (RoundOpened) isMachineEvent()  {}
func (ModelIn) isMachineEvent()      {}
func (EmbeddingsIn) isMachineEvent() {}
func (MachineTick) isMachineEvent()  {}
func (JobDone) isMachineEvent()      {}

// MachineAction is an output of Machine.Step for the driver to carry out,
// in order.
type MachineAction interface{ isMachineAction() }

// SendHello asks to join (a request: the reply comes back as JoinReply).
type SendHello struct{ Hello bus.Hello }

// Refused says the aggregator refused the join for good (job over, other
// model schema): the agent stops.
type Refused struct{ Reason string }

// PublishMetrics sends scores of the model a round starts from.
type PublishMetrics struct{ Metrics bus.Metrics }

// PublishEmbeddings sends released boundary embeddings to neighbour To on
// gf.<job>.emb.<from>.<to>. Releases is the ledger entry that accounts
// for them, durable when this action is returned.
type PublishEmbeddings struct {
	To         string
	Embeddings bus.Embeddings
	Releases   []privacy.Entry
}

// PublishUpdate sends the round's update. Every sensitive field passed
// the privacy gate; Releases are the ledger entries that account for them
// (model first), already durable when this action is returned (empty for
// a withheld update).
type PublishUpdate struct {
	Update   bus.Update
	Releases []privacy.Entry
}

// BudgetSpent reports that the gate refused a release on Channel for
// budget: from now on that channel is withheld (the model and grad
// channels: the agent trains but sends withheld updates).
type BudgetSpent struct {
	Round   uint64
	Channel privacy.Channel
	Err     error
}

// Note is something worth a log line (a stale model, a binding clip, an
// unreadable payload); Warn tells a warning from debug detail.
type Note struct {
	Warn  bool
	Round uint64
	Msg   string
	Err   error
}

// Finished reports the final scores (privacy figures included) after
// JobDone; the driver publishes them and says bye. Round is the last
// round trained.
type Finished struct {
	Round  uint64
	Scores map[string]float64
	// Head is the agent's final ledger head (after its final
	// calibration), reported with the final metrics for the aggregator's
	// done record.
	Head privacy.Ref
}

func (SendHello) isMachineAction()         {}
func (Refused) isMachineAction()           {}
func (PublishMetrics) isMachineAction()    {}
func (PublishEmbeddings) isMachineAction() {}
func (PublishUpdate) isMachineAction()     {}
func (BudgetSpent) isMachineAction()       {}
func (Note) isMachineAction()              {}
func (Finished) isMachineAction()          {}
