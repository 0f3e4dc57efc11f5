package aggregator

import (
	"encoding/json"
	"fmt"
)

// Strategy is what an algorithm adds to the round machine. Machine owns
// everything every algorithm does the same way (joins, the quorum,
// deadlines and FedBuff closes, staleness, dead clients, freezing,
// finishing, resending and snapshotting the latest models); a Strategy
// decides what a join and an update must carry, what a round-open
// announces, whether late updates may be folded in, and what a round's
// contributions turn into: one global model for every client (FedAvg,
// CE-FedGNN) or one model per client (LPSFed's personalized mixing, and
// FedGSP's per-group models next).
//
// A Strategy is part of the pure machine: deterministic, no I/O, no clock.
// Whatever it remembers between rounds it must export through State and
// take back through SetState, so that a restored machine continues
// exactly as the original would have. The models it returns from Close are
// kept by the machine (which resends them and snapshots them), so a
// strategy need not keep vectors of its own.
type Strategy interface {
	// Join vets a joining client's strategy-specific hello fields
	// (LPSFed's subgraph counts) and remembers what it needs of them. A
	// non-empty reason refuses the join.
	Join(j Join) (reason string)
	// Check vets an update for a job of numParams parameters (its shape,
	// its extras). A non-empty reason drops it with that Dropped.Reason.
	// Finiteness of the released scalars is checked by the machine.
	Check(u UpdateIn, numParams int) (reason string)
	// FoldsLate reports whether updates of closed rounds may be folded into
	// the open one when the staleness policy allows it.
	FoldsLate() bool
	// Open is called as round r opens, before Payload. A non-empty note
	// reports a failure the round opens in spite of (the machine records
	// it as a Dropped action), for example a reference kernel that could
	// not be built.
	Open(r uint64) (note string)
	// Payload is the open round's payload (OpenRound.Payload), nil when the
	// strategy announces nothing beyond the round. It is derived from the
	// strategy's state, so that re-announcements carry the same bytes.
	Payload() []byte
	// Close aggregates a closing round's contributions into the models to
	// publish. The machine publishes none of them when the round is
	// frozen, and sets their Round and Final itself.
	Close(in CloseInput) Outcome
	// State is the strategy's durable state (Snapshot.Strategy), nil when
	// it keeps none. Equal strategies must give equal bytes.
	State() (json.RawMessage, error)
	// SetState restores what State exported, validating it against the
	// machine's clients (sorted ids); it is called on a fresh strategy.
	SetState(raw json.RawMessage, clients []string) error
}

// CloseInput is a closing round as a strategy sees it.
type CloseInput struct {
	Round     uint64
	NumParams int
	// In are the round's own updates, sorted by client: withheld ones with
	// weight 0 and no vectors. Stale are the late updates folded in, in
	// arrival order, their weights scaled by the staleness policy.
	In, Stale []Contribution
	Frozen    bool // the round's models will not be published
	// Secure: the round aggregated securely. In then carries no vectors
	// (the survivors' weights and scalars) and Sum is the survivors'
	// weighted mean, its Weight their total weight; nil when the secure
	// round produced no sum.
	Secure bool
	Sum    *Contribution
	// Global is the latest global model's parameters (shared: not to be
	// modified), nil before the first or when the strategy publishes
	// none; the server optimizers step from it.
	Global []float32
}

// Outcome is what a round's contributions turn into.
type Outcome struct {
	// Models to publish: one with an empty To for every client, or one
	// per client. None: the round produced no model.
	Models []PublishModel
	Weight float64 // total aggregation weight (RoundClosed.Weight)
	Mix    *Mixed  // a personalizing strategy's record, or nil
	// SetAside is what a robust rule left out, per sender
	// (RoundClosed.SetAside).
	SetAside map[string]int
}

// descriptorTaker is a strategy that keeps its clients' descriptors
// (FedGSP). The machine hands over the descriptors of every update the
// strategy's Check accepted, as it arrives, whether the update then
// counts for its round or comes too late.
type descriptorTaker interface {
	takeDescriptors(client string, d Descriptor)
}

// newStrategy builds the strategy of cfg.Algo; cfg is valid.
func newStrategy(cfg Config) (Strategy, error) {
	switch cfg.Algo {
	case AlgoFedAvg, AlgoCEFedGNN, AlgoFedGNNST, AlgoFedProx, AlgoFedPer:
		return &meanStrategy{robust: cfg.Robust, opt: cfg.ServerOpt}, nil
	case AlgoLocal:
		return localStrategy{}, nil
	case AlgoLPSFed, AlgoLPSFedBPR:
		return newLPSFedStrategy(cfg.LPSFed), nil
	case AlgoFedGSP:
		return newFedGSPStrategy(cfg.FedGSP.effective()), nil
	}
	return nil, fmt.Errorf("aggregator: no strategy for algo %q", cfg.Algo)
}

// checkShape drops an update whose vectors do not fit the job: parameters
// of the job's length (unless withheld) and a gradient estimator that is
// absent or of the same length.
func checkShape(u UpdateIn, numParams int) string {
	if u.Masked {
		if len(u.Params)+len(u.Grad) > 0 {
			return "shape"
		}
		return ""
	}
	if !u.Withheld && (len(u.Params) != numParams || len(u.Grad) != 0 && len(u.Grad) != numParams) {
		return "shape"
	}
	return ""
}
