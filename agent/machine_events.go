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
// rebuilt from the ledger (so spent budgets survive), and a hello goes out.
// Incarnation numbers the boots (0 for the first); under a fixed noise seed
// it selects a fresh noise stream, so that a restart never replays the noise
// of an earlier life.
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
	Now      time.Time
}

// RoundOpened is a round opening: train for Round, starting from the model
// of ModelRound.
type RoundOpened struct {
	Round      uint64
	ModelRound uint64
	Deadline   time.Time
	Now        time.Time
}

// ModelIn is a global model (or one resent to this agent after a join).
type ModelIn struct {
	Round  uint64
	Params []float32
	Grad   []float32
	Final  bool
	Now    time.Time
}

// MachineTick advances time: an unanswered hello is retried.
type MachineTick struct{ Now time.Time }

// JobDone says the aggregator finished the job.
type JobDone struct{ Now time.Time }

func (Start) isMachineEvent()       {}
func (Crash) isMachineEvent()       {}
func (JoinReply) isMachineEvent()   {}
func (RoundOpened) isMachineEvent() {}
func (ModelIn) isMachineEvent()     {}
func (MachineTick) isMachineEvent() {}
func (JobDone) isMachineEvent()     {}

// MachineAction is an output of Machine.Step for the adapter to carry out.
type MachineAction interface{ isMachineAction() }

// SendHello asks to join (a request: the reply comes back as JoinReply).
type SendHello struct{ Hello bus.Hello }

// PublishUpdate sends the round's update. Its parameters passed the privacy
// gate; Releases are the ledger entries that account for them, already
// durable when this action is returned (empty for a withheld update).
type PublishUpdate struct {
	Update   bus.Update
	Releases []privacy.Entry
}

// BudgetSpent reports that the gate refused a release for budget: from now
// on the agent trains but sends withheld updates.
type BudgetSpent struct {
	Round uint64
	Err   error
}

func (SendHello) isMachineAction()     {}
func (PublishUpdate) isMachineAction() {}
func (BudgetSpent) isMachineAction()   {}
