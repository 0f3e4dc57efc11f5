package aggregator

import "time"

// Events and actions of LPSFedMachine beyond the generic Leave and Tick
// (events) and ReplyJoin, RoundClosed, Dropped and Finished (actions).

// LPSFedJoin is an LPSFed client's hello: its model schema, its
// training-set size and, unless the job is strict, its subgraph counts.
type LPSFedJoin struct {
	Client     string
	SchemaHash string
	NumParams  int
	Weight     float64 // training interactions
	Users      int     // counts for the reference graph; 0 in strict mode
	Items      int
	Edges      int
	Now        time.Time
}

// LPSFedUpdateIn is an LPSFed client's update for a round: its pooling and
// predictive MLPs, and the released scalars ρ_c (when it released one this
// round) and M^c.
type LPSFedUpdateIn struct {
	Client   string
	Round    uint64
	Weight   float64
	Params   []float32
	Withheld bool // budget spent: present for the quorum, nothing to mix
	// HasRho: Rho is ρ_c = KL(K^R‖K^c) against the reference kernel of
	// version RhoVersion.
	HasRho     bool
	Rho        float64
	RhoVersion uint64
	HasMargin  bool
	Margin     float64 // M^c, Eq. 10
	Now        time.Time
}

func (LPSFedJoin) isEvent()     {}
func (LPSFedUpdateIn) isEvent() {}

// LPSFedOpen opens a round: clients train from the personalized model of
// ModelRound (0: their own parameters) and answer before Deadline. Kernel
// is the reference kernel K^R (empty for FedAvg) built in round
// KernelVersion.
type LPSFedOpen struct {
	Round         uint64
	Deadline      time.Time
	ModelRound    uint64
	Kernel        []float64
	KernelVersion uint64
}

// PublishPersonal sends client To its personalized parameters
// θ̄·ρ̄ + θ^c·(1 − ρ̄) after round Round and, when HasMargin, its
// personalized margin (Eq. 14).
type PublishPersonal struct {
	Round     uint64
	To        string
	Params    []float32
	Margin    float64
	HasMargin bool
	RhoBar    float64 // the ρ̄_c used, for the record
	Final     bool
}

// Mixed records a round's mixing decision: every contributor's last
// released ρ_c (NaN when it never released one), the normalized ρ̄_c of
// Eq. 12, the global mean margin M̄ (Eq. 13) and whether the round was
// frozen (no distribution).
type Mixed struct {
	Round        uint64
	Rho, RhoBar  map[string]float64
	GlobalMargin float64
	HasMargin    bool
	Frozen       bool
}

func (LPSFedOpen) isAction()      {}
func (PublishPersonal) isAction() {}
func (Mixed) isAction()           {}
