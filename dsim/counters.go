package dsim

import "time"

// Result is what one simulated job did.
type Result struct {
	Seed     uint64
	Strategy string // Config.Strategy()
	Secure   bool   // Config.SecAgg
	// ServerOpt is Config.ServerOpt's rule, "" without one.
	ServerOpt string
	Finished  bool
	Rounds    uint64 // rounds closed
	// Model is the final global model, or the final personalized models
	// one after the other in recipient order.
	Model      []float32
	ModelRound uint64
	Steps      int
	SimTime    time.Duration
	// Trace is a hash of every step (time, party, event kind) and every
	// model: two runs of one seed must agree on it bit for bit.
	Trace     uint64
	Counters  Counters
	Violation *Violation // the first invariant broken, nil if none
	// Text is the readable trace (Config.Trace), empty otherwise.
	Text string
}

// Counters count what the run exercised.
type Counters struct {
	Sent, Delivered             int
	Dropped, Duplicated         int // by the network
	Reordered                   int // deliveries that overtook an earlier message on their link
	Delayed                     int // messages held back longer than a round timeout
	PartitionsStarted           int
	PartitionDrops              int // messages lost to a partition
	AgentCrashes, AggCrashes    int
	AgentRestarts, AggRestarts  int
	MidStepCrashes              int // crashes that lost a step's messages
	ToDown                      int // messages that reached a party that was down
	Accepted, StaleFolded       int // updates the aggregator counted
	Rejected                    map[string]int
	Closes                      map[string]int // by reason
	Adapted                     map[string]int // deadline adaptations, by reason
	Withheld, BudgetRefusals    int
	LedgerEntries, ReleasesSent int
	Flooded                     int // flood messages that reached the aggregator
	// Refused counts the messages a receiver's validator refused, by
	// reason (bus.Reason*).
	Refused map[string]int
	// EmbSent and ScalarsSent count released embedding messages and
	// scalars (ρ, margins) put on the wire; Personal the personalized
	// models; Finals the agents that reported final scores.
	EmbSent, ScalarsSent, Personal, Finals int
	// FedGSP: DescSent counts the updates sent with descriptors,
	// DescRefused the descriptor releases the budget refused, DescKept the
	// lives that started with their descriptors already in the ledger
	// (and must not release them again), GraphCloses the closes that
	// learned the collaboration graphs.
	DescSent, DescRefused, DescKept, GraphCloses int
	// Secure aggregation: updates sent masked, protocol messages the
	// agents sent, secure rounds closed with a sum and without one (by
	// the check's outcome), the aggregator's refusals by kind, and the
	// secure sums checked against the survivors' released vectors.
	MaskedUpdates, SecAggSent      int
	SecureSums, SecureFailed       int
	SecureChecked, SecureUnchecked int
	SecAggRefused                  map[string]int
	// ClearInSecure counts updates an agent sent with released vectors
	// in the clear in a secure job (InvSecureClear).
	ClearInSecure int
}

// Add accumulates o into c.
func (c *Counters) Add(o Counters) {
	c.Sent += o.Sent
	c.Delivered += o.Delivered
	c.Dropped += o.Dropped
	c.Duplicated += o.Duplicated
	c.Reordered += o.Reordered
	c.Delayed += o.Delayed
	c.PartitionsStarted += o.PartitionsStarted
	c.PartitionDrops += o.PartitionDrops
	c.AgentCrashes += o.AgentCrashes
	c.AggCrashes += o.AggCrashes
	c.AgentRestarts += o.AgentRestarts
	c.AggRestarts += o.AggRestarts
	c.MidStepCrashes += o.MidStepCrashes
	c.ToDown += o.ToDown
	c.Accepted += o.Accepted
	c.StaleFolded += o.StaleFolded
	c.Withheld += o.Withheld
	c.BudgetRefusals += o.BudgetRefusals
	c.LedgerEntries += o.LedgerEntries
	c.ReleasesSent += o.ReleasesSent
	c.Flooded += o.Flooded
	c.EmbSent += o.EmbSent
	c.ScalarsSent += o.ScalarsSent
	c.Personal += o.Personal
	c.Finals += o.Finals
	c.DescSent += o.DescSent
	c.DescRefused += o.DescRefused
	c.DescKept += o.DescKept
	c.GraphCloses += o.GraphCloses
	c.MaskedUpdates += o.MaskedUpdates
	c.SecAggSent += o.SecAggSent
	c.SecureSums += o.SecureSums
	c.SecureFailed += o.SecureFailed
	c.SecureChecked += o.SecureChecked
	c.SecureUnchecked += o.SecureUnchecked
	c.ClearInSecure += o.ClearInSecure
	c.SecAggRefused = addCounts(c.SecAggRefused, o.SecAggRefused)
	c.Refused = addCounts(c.Refused, o.Refused)
	c.Rejected = addCounts(c.Rejected, o.Rejected)
	c.Closes = addCounts(c.Closes, o.Closes)
	c.Adapted = addCounts(c.Adapted, o.Adapted)
}

func addCounts(dst, src map[string]int) map[string]int {
	if dst == nil && len(src) > 0 {
		dst = map[string]int{}
	}
	for k, n := range src {
		dst[k] += n
	}
	return dst
}
