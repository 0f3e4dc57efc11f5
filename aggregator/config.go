package aggregator

import (
	"fmt"
	"time"
)

// Algorithms the aggregator knows.
const (
	AlgoFedAvg   = "fedavg"    // sample-weighted parameter average
	AlgoLocal    = "local"     // no federation: rounds pace the clients, nothing is averaged
	AlgoCEFedGNN = "cefedgnn"  // parameters and gradient estimators averaged; embeddings go peer to peer
	AlgoFedGNNST = "fedgnn-st" // as cefedgnn, stale exchange without moving averages (ablation)
)

// Averages reports whether the algorithm averages client parameters.
func (c Config) Averages() bool { return c.Algo != AlgoLocal }

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
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch c.Algo {
	case AlgoFedAvg, AlgoLocal, AlgoCEFedGNN, AlgoFedGNNST:
	default:
		return fmt.Errorf("aggregator: config: unknown algo %q (want fedavg, local, cefedgnn or fedgnn-st)", c.Algo)
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
	if c.RoundTimeout <= 0 {
		return fmt.Errorf("aggregator: config: round timeout %v must be positive", c.RoundTimeout)
	}
	return c.Staleness.Validate()
}
