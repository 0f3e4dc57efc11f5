package aggregator

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Algorithms the aggregator knows.
const (
	AlgoFedAvg   = "fedavg"    // sample-weighted parameter average
	AlgoLocal    = "local"     // no federation: rounds pace the clients, nothing is averaged
	AlgoCEFedGNN = "cefedgnn"  // parameters and gradient estimators averaged; embeddings go peer to peer
	AlgoFedGNNST = "fedgnn-st" // as cefedgnn, stale exchange without moving averages (ablation)
	// FedProx and FedPer aggregate as FedAvg: the proximal term and the
	// personal head are the learner's business.
	AlgoFedProx = "fedprox" // sample-weighted average; clients train with a proximal term
	AlgoFedPer  = "fedper"  // sample-weighted average; clients keep their own head
)

// Algos lists the algorithms the aggregator runs, each a Strategy.
func Algos() []string {
	return []string{AlgoFedAvg, AlgoLocal, AlgoCEFedGNN, AlgoFedGNNST, AlgoLPSFedBPR, AlgoLPSFed, AlgoFedProx, AlgoFedPer, AlgoFedGSP}
}

// Averages reports whether the algorithm federates client parameters.
func (c Config) Averages() bool { return c.Algo != AlgoLocal }

// Personalizes reports whether the algorithm sends each client a model of
// its own (LPSFed, FedGSP) rather than one global model.
func (c Config) Personalizes() bool { return c.lpsfed() || c.Algo == AlgoFedGSP }

// lpsfed reports whether the algorithm is LPSFed's (Config.LPSFed applies).
func (c Config) lpsfed() bool { return c.Algo == AlgoLPSFed || c.Algo == AlgoLPSFedBPR }

// Config fixes a job's round policy.
type Config struct {
	Algo         string
	Rounds       int           // rounds to run
	MinClients   int           // clients that must join before round 1 opens
	Quorum       int           // updates that close a round early; 0: every live client
	RoundTimeout time.Duration // deadline of each round after it opens
	// MissedToDead is how many consecutive rounds a client may miss before it
	// no longer counts towards the quorum (a join, or an update the round
	// accepts, revives it; a dropped one does not); 0: 3.
	MissedToDead int
	Staleness    Staleness
	// MaxStaleness is how many rounds late an update may be and still be
	// folded in by the staleness policy; older ones are dropped as late.
	// It bounds what the aggregator remembers of past rounds; 0: 256.
	MaxStaleness int
	// Buffer, when positive, closes a round as soon as Buffer updates are in
	// (FedBuff): current-round updates and late ones folded in by the
	// staleness policy both count, whoever sent them.
	Buffer int
	// FreezeRounds is how many rounds at the start publish no model
	// (LPSFed, Appendix D.6: "freezes parameter updates during the first
	// two global epochs"): clients warm their local models up alone.
	FreezeRounds int
	// LPSFed is the reference graph of an lpsfed or lpsfed-bpr job.
	LPSFed LPSFedConfig
	// FedGSP is the collaboration-graph learning of a fedgsp job; the zero
	// value is DefaultFedGSPConfig.
	FedGSP FedGSPConfig `json:",omitzero"`
	// DeadlineFactor, when positive, adapts each round's deadline to the
	// measured update times (deadline.go): DeadlineFactor × their median
	// over the latest DeadlineWindow updates (0: 32), never below
	// RoundTimeout (the floor) nor above DeadlineCap (0: 20 floors); a
	// round with nothing in at its deadline is extended while live clients
	// remain, up to the cap. 0: every round closes at RoundTimeout, as
	// without adaptation.
	DeadlineFactor float64       `json:",omitempty"`
	DeadlineCap    time.Duration `json:",omitempty"`
	DeadlineWindow int           `json:",omitempty"`
	// Contract is what the job fixes before any hello: the model schema,
	// the largest declared training size, the clip and noise bounding
	// updates' norms (contract.go). Zero: the first accepted hello sets the
	// schema, and no norm is bounded.
	Contract Contract `json:",omitzero"`
	// Robust is the averaging algorithms' aggregation rule (robust.go);
	// zero: the sample-weighted mean.
	Robust Robust `json:",omitzero"`
	// ServerOpt is the averaging algorithms' server optimizer
	// (server_opt.go), applied to the mean or the robust rule's result;
	// zero: the mean is the new global model.
	ServerOpt ServerOpt `json:",omitzero"`
	// SecAgg, when On, aggregates each round's vectors securely
	// (secure.go): the machine sees their sum, never one party's.
	SecAgg SecAgg `json:",omitzero"`
}

// Validate checks the configuration.
func (c Config) Validate() error {
	known := false
	for _, a := range Algos() {
		known = known || a == c.Algo
	}
	if !known {
		return fmt.Errorf("aggregator: config: unknown algo %q (want one of %s)", c.Algo, strings.Join(Algos(), ", "))
	}
	if c.Rounds < 1 {
		return fmt.Errorf("aggregator: config: rounds %d < 1", c.Rounds)
	}
	if c.MinClients < 1 {
		return fmt.Errorf("aggregator: config: min clients %d < 1", c.MinClients)
	}
	if c.Quorum < 0 {
		return fmt.Errorf("aggregator: config: quorum %d < 0", c.Quorum)
	}
	if c.Buffer < 0 {
		return fmt.Errorf("aggregator: config: buffer %d < 0", c.Buffer)
	}
	if c.MaxStaleness < 0 {
		return fmt.Errorf("aggregator: config: max staleness %d < 0", c.MaxStaleness)
	}
	if c.MissedToDead < 0 {
		return fmt.Errorf("aggregator: config: missed-to-dead %d < 0", c.MissedToDead)
	}
	if c.FreezeRounds < 0 {
		return fmt.Errorf("aggregator: config: freeze rounds %d < 0", c.FreezeRounds)
	}
	if c.lpsfed() {
		if err := c.LPSFed.validate(); err != nil {
			return err
		}
	}
	if c.Algo == AlgoFedGSP {
		if err := c.FedGSP.validate(); err != nil {
			return err
		}
	}
	if c.Personalizes() {
		if c.Buffer > 0 || c.Staleness.Policy != "" && c.Staleness.Policy != StaleDrop {
			return fmt.Errorf("aggregator: config: %s mixes each client's own update of the round: no buffer, no staleness policy but drop", c.Algo)
		}
	}
	if c.RoundTimeout <= 0 {
		return fmt.Errorf("aggregator: config: round timeout %v must be positive", c.RoundTimeout)
	}
	if err := c.validateDeadline(); err != nil {
		return err
	}
	if err := c.Contract.validate(); err != nil {
		return err
	}
	if err := c.Robust.validate(c.Algo); err != nil {
		return err
	}
	if err := c.ServerOpt.validate(c.Algo); err != nil {
		return err
	}
	if err := c.SecAgg.validate(c); err != nil {
		return err
	}
	return c.Staleness.Validate()
}

// sameConfig reports whether two configurations fix the same job; the
// reference builder is code, not configuration, and is not compared.
func sameConfig(a, b Config) bool {
	a.LPSFed.Reference, b.LPSFed.Reference = nil, nil
	a.SecAgg.Signer, a.SecAgg.Verifier, b.SecAgg.Signer, b.SecAgg.Verifier = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}
