package aggregator

import "time"

// Event is an input to Machine.Step.
type Event interface{ isEvent() }

// Join is a client's hello.
type Join struct {
	Client     string
	SchemaHash string
	NumParams  int
	Weight     float64 // training-set size
	Now        time.Time
}

// UpdateIn is a client's update for a round.
type UpdateIn struct {
	Client    string
	Round     uint64 // the round the client trained for
	BaseRound uint64 // the model round it started from
	Weight    float64
	Params    []float32 // empty for algorithms that share nothing (local)
	Grad      []float32 // gradient estimator (CE-FedGNN); empty otherwise
	// Withheld: the client's privacy budget is spent, so it sends no
	// parameters; it still counts as present for the quorum.
	Withheld bool
	Now      time.Time
}

// Leave is a client's clean exit.
type Leave struct {
	Client string
	Now    time.Time
}

// Tick advances time; deadlines are checked on every event.
type Tick struct{ Now time.Time }

func (Join) isEvent()     {}
func (UpdateIn) isEvent() {}
func (Leave) isEvent()    {}
func (Tick) isEvent()     {}

// Action is an output of Machine.Step for the adapter to carry out.
type Action interface{ isAction() }

// ReplyJoin answers a Join.
type ReplyJoin struct {
	Client   string
	Accepted bool
	Reason   string
	Round    uint64 // the round open now, 0 before the first
}

// OpenRound opens a round: clients train from the model of ModelRound (0:
// their own initialisation) and answer before Deadline.
type OpenRound struct {
	Round      uint64
	Deadline   time.Time
	ModelRound uint64
}

// PublishModel broadcasts the global model after round Round, or sends it to
// one client (To set) that joined late or rejoined.
type PublishModel struct {
	Round  uint64
	Params []float32
	Grad   []float32 // averaged gradient estimator, when clients share one
	To     string
	Final  bool
}

// RoundClosed records a close decision: who was in, who was late, why.
type RoundClosed struct {
	Round     uint64
	Reason    string   // "quorum", "deadline" or "buffer"
	In        []string // clients whose update for this round counted
	Stale     []string // clients whose late update from an earlier round was folded in
	Late      []string // live clients that had not answered at close
	Weight    float64  // total aggregation weight
	Live      int
	ClosedAt  time.Time
	Duration  time.Duration
	Dead      []string // clients no longer counted towards the quorum
	Aggregate bool     // whether a new model was produced
}

// Dropped records an update that did not count, with its reason.
type Dropped struct {
	Client string
	Round  uint64
	Reason string // "late", "duplicate", "unknown_client", "shape", "finished"
}

// Finished says the job is over; the adapter publishes done and stops.
type Finished struct{ Rounds uint64 }

func (ReplyJoin) isAction()    {}
func (OpenRound) isAction()    {}
func (PublishModel) isAction() {}
func (RoundClosed) isAction()  {}
func (Dropped) isAction()      {}
func (Finished) isAction()     {}
