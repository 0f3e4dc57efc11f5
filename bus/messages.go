package bus

// The typed bodies carried in envelopes. Vectors are Vector (one blob).

// Hello is a client's join request on gf.<job>.hello.<client>.
type Hello struct {
	SchemaHash string `msgpack:"schema"`
	NumParams  int    `msgpack:"nparams"`
	TrainSize  int    `msgpack:"train"` // weight for FedAvg; a count only
	Algo       string `msgpack:"algo"`
}

// HelloReply answers a Hello.
type HelloReply struct {
	Accepted bool   `msgpack:"ok"`
	Reason   string `msgpack:"reason,omitempty"`
	Round    uint64 `msgpack:"round"` // the round currently open, 0 if none
	Algo     string `msgpack:"algo"`
	Rounds   int    `msgpack:"rounds"`
	InitSeed uint64 `msgpack:"seed"` // shared model initialisation seed
}

// RoundOpen opens round Round on gf.<job>.round.
type RoundOpen struct {
	Round      uint64 `msgpack:"round"`
	Deadline   int64  `msgpack:"deadline"`    // unix nanoseconds
	ModelRound uint64 `msgpack:"model_round"` // the round whose model clients should start from; 0: their own init
	Payload    []byte `msgpack:"payload,omitempty"`
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
}

// Model is a global (gf.<job>.model.all) or personalized
// (gf.<job>.model.<client>) model.
type Model struct {
	Round  uint64 `msgpack:"round"`
	Params Vector `msgpack:"params,omitempty"`
	Grad   Vector `msgpack:"grad,omitempty"` // averaged gradient estimator (CE-FedGNN)
	Final  bool   `msgpack:"final"`
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
}

// Bye says a client leaves cleanly.
type Bye struct {
	Reason string `msgpack:"reason"`
}

// Done says the aggregator finished the job.
type Done struct {
	Rounds uint64 `msgpack:"rounds"`
}

// LPSFed's messages. Each extends a base message inline, so that the
// generic validator opens it as the base (unknown fields are skipped) and
// checks the base's vectors; LPSFed's receivers decode the body again as
// the extension and check the extra fields themselves.

// LPSFedHello is an LPSFed join request on gf.<job>.hello.<client>: the
// client's subgraph counts (counts only) for the server's reference
// graph, all zero when the job runs in strict mode.
type LPSFedHello struct {
	Hello `msgpack:",inline"`
	Users int `msgpack:"users"`
	Items int `msgpack:"items"`
	Edges int `msgpack:"edges"`
}

// LPSFedRound is the strategy payload of an LPSFed RoundOpen (msgpack in
// RoundOpen.Payload): the reference kernel K^R over Φ frequencies and the
// round it was built in, so that clients release ρ_c only when it changes.
type LPSFedRound struct {
	Kernel  Vector `msgpack:"kr"`
	Version uint64 `msgpack:"krv"`
}

// LPSFedUpdate is an LPSFed update on gf.<job>.update.<client>: Params
// carries the pooling and predictive MLPs; Rho the gated ρ_c = KL(K^R‖K^c)
// against reference kernel RhoVersion (empty when unchanged since the
// client's last release); Margin the gated mean margin M^c.
type LPSFedUpdate struct {
	Update     `msgpack:",inline"`
	Rho        Sensitive `msgpack:"rho"`
	RhoVersion uint64    `msgpack:"rhov"`
	Margin     Sensitive `msgpack:"margin"`
}

// LPSFedModel is a personalized LPSFed model on gf.<job>.model.<client>:
// θ^c ← θ̄·ρ̄_c + θ^c·(1 − ρ̄_c) in Params and, when HasMargin, the
// personalized margin M̄·ρ̄_c + M^c·(1 − ρ̄_c).
type LPSFedModel struct {
	Model     `msgpack:",inline"`
	Margin    float64 `msgpack:"margin"`
	HasMargin bool    `msgpack:"has_margin"`
}
