package aggregator

import (
	"time"

	"graphfed/bus"
	"graphfed/privacy"
)

// Event is an input to Machine.Step.
type Event interface{ isEvent() }

// Join is a client's hello.
type Join struct {
	Client     string
	SchemaHash string
	NumParams  int
	Weight     float64 // training-set size
	// Users, Items and Edges are a recommendation client's subgraph counts
	// (LPSFed's reference graph); zero for other strategies and in strict
	// mode. The strategy vets and keeps them.
	Users, Items, Edges int
	Now                 time.Time
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
	// Released scalars a strategy may use (LPSFed): ρ_c = KL(K^R‖K^c)
	// against the reference kernel of version RhoVersion when HasRho, and
	// the mean margin M^c when HasMargin. The machine drops an update whose
	// scalars are not finite; the strategy decides what they mean.
	Rho        float64
	HasRho     bool
	RhoVersion uint64
	Margin     float64
	HasMargin  bool
	// Descriptors are FedGSP's spectral descriptors, released once with
	// the first update a client sends (bus.Update.Descriptors); nil in
	// every other update. A strategy that keeps them (FedGSP) takes them
	// as the update arrives, even when the update itself comes too late
	// for its round: they never change.
	Descriptors *Descriptor
	// Masked: the update's vectors are in the round's secure sum
	// (bus.Update.Masked); Params and Grad are empty.
	Masked bool
	// Took is how long the client says its round's work took (bus.Update
	// TrainNanos); 0: not reported. It feeds the adaptive deadline only.
	Took time.Duration
	// Head is the client's ledger head after the update's releases
	// (bus.Update.Ledger); zero: not reported. The machine's records
	// repeat the latest of each client (records.go).
	Head privacy.Ref
	Now  time.Time
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
	// Anchor is the aggregator's latest ledger record, stamped by the
	// driver (Anchored); zero from the machine.
	Anchor privacy.Ref
}

// OpenRound opens a round: clients train from the model of ModelRound (0:
// their own initialisation) and answer before Deadline. Payload is the
// strategy's round payload (bus.RoundOpen.Payload; LPSFed: a msgpack
// bus.LPSFedRound carrying K^R), nil when it has none.
type OpenRound struct {
	Round      uint64
	Deadline   time.Time
	ModelRound uint64
	Payload    []byte
	Anchor     privacy.Ref // stamped by the driver, as ReplyJoin.Anchor
	// SecAgg is the round's secure aggregation (its cohort and
	// parameters), nil when updates travel in the clear.
	SecAgg *bus.SecAggRound
	// SecureJob: the job aggregates securely, whether or not SecAgg could
	// be opened (bus.RoundOpen.SecureJob).
	SecureJob bool
}

// PublishModel is a model the adapter sends after round Round: to every
// client when To is empty (a global model), or to client To alone (a
// personalized model, or the global one resent to a late joiner).
type PublishModel struct {
	Round  uint64
	Params []float32
	Grad   []float32 // averaged gradient estimator, when clients share one
	To     string
	// Margin, when HasMargin, is the client's personalized margin (LPSFed,
	// Eq. 14).
	Margin    float64
	HasMargin bool
	// Mix: Params is the global θ̄ and the client mixes with RhoBar
	// itself (bus.Model.Mix; secure LPSFed).
	Mix    bool
	RhoBar float64
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
	Aggregate bool     // whether new models were published
	// Frozen: the round fell in Config.FreezeRounds, so whatever was
	// aggregated was not published.
	Frozen bool `json:",omitempty"`
	// Mix is a personalizing strategy's mixing decision (LPSFed); nil for
	// the others.
	Mix *Mixed `json:",omitempty"`
	// Budget is how long the round was allowed to stay open (its final
	// deadline after its opening) and Extensions how many times it was
	// extended for being empty, when the deadline adapts
	// (Config.DeadlineFactor); zero otherwise.
	Budget     time.Duration `json:",omitempty"`
	Extensions int           `json:",omitempty"`
	// SetAside is how much of each sender's parameters the robust
	// aggregation rule (Config.Robust) left out this round: for the
	// trimmed mean the coordinates it dropped, for the median those where
	// the sender held the largest or smallest value, for normclip the
	// percentage of the update's norm it removed. A bank that keeps
	// sending outliers shows here (they are within the contract, so they
	// are not rejects); nil under the mean.
	SetAside map[string]int `json:",omitempty"`
	// SecAgg is the round's secure aggregation, when on: its parameters,
	// the sum's survivors, and why a round has no sum.
	SecAgg *SecureClose `json:",omitempty"`
}

// DeadlineAdapted records a change of the open round's deadline by the
// adaptive policy (Config.DeadlineFactor, deadline.go); the adapter logs
// it. Reason is AdaptMeasured (Factor × Median of Samples measured update
// times) or AdaptEmpty (nothing in at the deadline while live clients
// remain: extended by a floor, up to the cap).
type DeadlineAdapted struct {
	Round    uint64
	Deadline time.Time
	Budget   time.Duration // Deadline minus the round's opening
	Reason   string
	Median   time.Duration
	Samples  int
}

// Mixed records a personalizing strategy's mixing decision for a round:
// the ρ_c each contributor last released (contributors that never released
// one are absent), the normalized ρ̄_c of Eq. 12 for every contributor (1:
// the global model whole), and the mean margin M̄ of Eq. 13 when any
// contributor sent a margin.
type Mixed struct {
	Rho          map[string]float64 `json:"rho,omitempty"`
	RhoBar       map[string]float64 `json:"rho_bar,omitempty"`
	GlobalMargin float64            `json:"global_margin,omitempty"`
	HasMargin    bool               `json:"has_margin,omitempty"`
	// Collab is FedGSP's overall collaboration graph W after a round
	// that learned it: each client's row, over the clients in id order.
	Collab map[string][]float64 `json:"collab,omitempty"`
}

// Dropped records an update that did not count, with its reason.
type Dropped struct {
	Client string
	Round  uint64
	Reason string // "late", "duplicate", "unknown_client", "shape", "finished"
}

// Finished says the job is over; the adapter publishes done and stops.
// Anchor is stamped by the driver, as ReplyJoin.Anchor.
type Finished struct {
	Rounds uint64
	Anchor privacy.Ref
}

func (ReplyJoin) isAction()       {}
func (OpenRound) isAction()       {}
func (PublishModel) isAction()    {}
func (RoundClosed) isAction()     {}
func (Dropped) isAction()         {}
func (Finished) isAction()        {}
func (DeadlineAdapted) isAction() {}
