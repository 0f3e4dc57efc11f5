package bus

// The typed bodies carried in envelopes. Vectors are Vector (one blob).

// Hello is a client's join request on gf.<job>.hello.<client>.
type Hello struct {
	SchemaHash string `msgpack:"schema"`
	NumParams  int    `msgpack:"nparams"`
	TrainSize  int    `msgpack:"train"` // weight for FedAvg; a count only
	Algo       string `msgpack:"algo"`
	// Users, Items and Edges are a recommendation client's subgraph counts
	// (counts only), for LPSFed's reference graph; zero in strict mode and
	// for every other algorithm.
	Users int `msgpack:"users,omitempty"`
	Items int `msgpack:"items,omitempty"`
	Edges int `msgpack:"edges,omitempty"`
}

// HelloReply answers a Hello.
type HelloReply struct {
	Accepted bool   `msgpack:"ok"`
	Reason   string `msgpack:"reason,omitempty"`
	Round    uint64 `msgpack:"round"` // the round currently open, 0 if none
	Algo     string `msgpack:"algo"`
	Rounds   int    `msgpack:"rounds"`
	InitSeed uint64 `msgpack:"seed"` // shared model initialisation seed
	// Run is the aggregator's run id (NewRunID): the agent follows this
	// run only, until a run that names it in Ended takes the job over.
	Run string `msgpack:"run,omitempty"`
	// Anchor names the aggregator's latest ledger record (LedgerRef):
	// the agent's next entries carry it. nil: no record yet, or none kept.
	Anchor *LedgerRef `msgpack:"anchor,omitempty"`
	// Ended are the job's earlier runs, oldest first, that ended before
	// Run took the job over (the aggregator's lease passed from each to
	// the next): an agent of one of them follows Run.
	Ended []string `msgpack:"ended,omitempty"`
}

// RoundOpen opens round Round on gf.<job>.round.
type RoundOpen struct {
	Round      uint64 `msgpack:"round"`
	Deadline   int64  `msgpack:"deadline"`    // unix nanoseconds
	ModelRound uint64 `msgpack:"model_round"` // the round whose model clients should start from; 0: their own init
	Payload    []byte `msgpack:"payload,omitempty"`
	Run        string `msgpack:"run,omitempty"` // the aggregator's run id (HelloReply.Run)
	// Anchor names the aggregator's latest ledger record, its record of
	// the round that just closed (HelloReply.Anchor).
	Anchor *LedgerRef `msgpack:"anchor,omitempty"`
	// Ended are the runs that ended before Run (HelloReply.Ended).
	Ended []string `msgpack:"ended,omitempty"`
	// SecAgg, when set, is the round's secure aggregation: its cohort and
	// the parameters every party derives the round's protocol
	// configuration from (secagg_round.go). nil: updates travel in the
	// clear.
	SecAgg *SecAggRound `msgpack:"secagg,omitempty"`
	// SecureJob says the job aggregates securely even when this round
	// could not open its secure aggregation (SecAgg nil: fewer than two
	// live parties): an agent then holds its vectors for the next round
	// rather than send them in the clear.
	SecureJob bool `msgpack:"secure_job,omitempty"`
}

// Update is a client's contribution for a round on gf.<job>.update.<client>.
type Update struct {
	Round     uint64    `msgpack:"round"`
	BaseRound uint64    `msgpack:"base"`   // the model round this update was trained from
	Weight    float64   `msgpack:"weight"` // training-set size
	Params    Sensitive `msgpack:"params"`
	Grad      Sensitive `msgpack:"grad"` // CE-FedGNN's gradient estimator G; empty otherwise
	Loss      float64   `msgpack:"loss"`
	// Withheld says the client trained but the privacy gate refused to
	// release its parameters (budget exhausted): it counts as present for
	// the quorum and contributes nothing to the average.
	Withheld bool `msgpack:"withheld,omitempty"`
	// Rho is LPSFed's gated ρ_c = KL(K^R‖K^c) against the reference kernel
	// of version RhoVersion (empty when unchanged since the client's last
	// release); Margin its gated mean margin M^c. Empty for other algorithms.
	Rho        Sensitive `msgpack:"rho,omitempty"`
	RhoVersion uint64    `msgpack:"rhov,omitempty"`
	Margin     Sensitive `msgpack:"margin,omitempty"`
	// TrainNanos is how long the client's round took on its side, from
	// the round's opening to this update (training, scoring, releases), in
	// nanoseconds of its wall clock; 0: not measured. The aggregator sizes
	// adaptive deadlines from it (aggregator.Config.DeadlineFactor).
	TrainNanos int64 `msgpack:"train_ns,omitempty"`
	// Descriptors are FedGSP's spectral descriptors, released once (on
	// privacy.ChannelDescriptor) with the first update a client sends:
	// 4·DescOrders·DescPrincipal rows of DescDim values, row-major (blocks
	// A, B, C, D of the FedGSP contract). Empty, with zero shape fields, in
	// every other update and for every other algorithm. checkDescriptors
	// bounds them.
	Descriptors   Sensitive `msgpack:"desc,omitempty"`
	DescOrders    int       `msgpack:"desc_k,omitempty"`
	DescPrincipal int       `msgpack:"desc_kpr,omitempty"`
	DescDim       int       `msgpack:"desc_dim,omitempty"`
	// Ledger is the client's ledger head after this round's releases:
	// the seq and digest of its last entry (nil before its first). The
	// aggregator's round records repeat it, so that a ledger that lost
	// the tail of the client's chain shows it (privacy/records.go).
	Ledger *LedgerRef `msgpack:"ledger,omitempty"`
	// Masked says that the round's parameters and gradient estimator go
	// into the round's secure sum (KindSAMasked), not in this update,
	// whose Params and Grad are then empty.
	Masked bool `msgpack:"masked,omitempty"`
}

// Model is a global (gf.<job>.model.all) or personalized
// (gf.<job>.model.<client>) model.
type Model struct {
	Round  uint64 `msgpack:"round"`
	Params Vector `msgpack:"params,omitempty"`
	Grad   Vector `msgpack:"grad,omitempty"` // averaged gradient estimator (CE-FedGNN)
	Final  bool   `msgpack:"final"`
	// Margin, when HasMargin, is LPSFed's personalized margin
	// M̄·ρ̄_c + M^c·(1 − ρ̄_c).
	Margin    float64 `msgpack:"margin,omitempty"`
	HasMargin bool    `msgpack:"has_margin,omitempty"`
	// Mix, under secure aggregation, says that Params is the round's
	// global θ̄ and the client mixes its personalized model itself:
	// ρ̄_c·θ̄ + (1 − ρ̄_c)·θ_c with its own released θ_c (LPSFed, Eq. 12),
	// since the aggregator never holds θ_c. RhoBar is ρ̄_c, in [0, 1].
	Mix    bool    `msgpack:"mix,omitempty"`
	RhoBar float64 `msgpack:"rho_bar,omitempty"`
}

// Embeddings carries noised boundary-node embeddings on gf.<job>.emb.<from>.<to>.
type Embeddings struct {
	Round   uint64    `msgpack:"round"`
	Layer   int       `msgpack:"layer"`
	Dim     int       `msgpack:"dim"`
	NodeIDs []int64   `msgpack:"nodes"`
	Data    Sensitive `msgpack:"data"`
}

// Metrics reports a client's evaluation scores on gf.<job>.metrics.<client>.
type Metrics struct {
	Round  uint64             `msgpack:"round"`
	Final  bool               `msgpack:"final"`
	Scores map[string]float64 `msgpack:"scores"`
	// Ledger, on the final metrics, is the client's final ledger head
	// (after its last calibration): the aggregator's done record names it.
	Ledger *LedgerRef `msgpack:"ledger,omitempty"`
}

// Bye says a client leaves cleanly.
type Bye struct {
	Reason string `msgpack:"reason"`
}

// Done says the aggregator finished the job, or stopped it (Stopped set)
// before its last round: then the agents leave without a final evaluation.
type Done struct {
	Rounds uint64 `msgpack:"rounds"`
	// Run is the aggregator's run id: a done of another run is a replay,
	// rejected by the agents (ReasonReplay), unless that run names the
	// agent's among those that ended (Ended, as in HelloReply).
	Run   string   `msgpack:"run,omitempty"`
	Ended []string `msgpack:"ended,omitempty"`
	// Stopped, when set, says why the job stopped early (the aggregator
	// received SIGINT or SIGTERM); the job can be resumed (--resume).
	Stopped string `msgpack:"stopped,omitempty"`
	// Anchor names the aggregator's latest ledger record
	// (HelloReply.Anchor), which the agents' final entries carry.
	Anchor *LedgerRef `msgpack:"anchor,omitempty"`
}

// LPSFedRound is the strategy payload of an LPSFed RoundOpen (msgpack in
// RoundOpen.Payload): the reference kernel K^R over Φ frequencies and the
// round it was built in, so that clients release ρ_c only when it changes.
type LPSFedRound struct {
	Kernel  Vector `msgpack:"kr"`
	Version uint64 `msgpack:"krv"`
}
