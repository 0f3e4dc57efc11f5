package dsim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/privacy"
)

// The deterministic simulator runs aggregator.Machine and one agent.Machine
// per client on a simulated network and clock, without NATS: a seeded event
// queue decides when every message arrives, whether it arrives at all or
// twice, and when parties are cut off, crash and restart. After every step
// it checks the invariants (dsim_check.go). Everything that varies is drawn
// from the seed, so a failure reproduces from its seed alone.

// Config is one simulated job. RandomConfig and FocusedConfig
// derive one from a seed.
type Config struct {
	Seed         uint64
	Agents       int
	Rounds       int
	MinClients   int // clients that must join before round 1; 0: all
	Quorum       int // 0: every live client
	Buffer       int // FedBuff when positive
	Staleness    aggregator.Staleness
	RoundTimeout time.Duration
	HelloRetry   time.Duration
	LocalEpochs  int
	Dim, Samples int // the agents' logistic regression
	ModelSigma   float64
	ModelClip    float64
	Budget       privacy.Budget // per-client budget; zero: none
	Delta        float64
	Faults       Faults
	// MaxSteps bounds the run; a job still unfinished after it, or after
	// MaxSimTime of simulated time, violates the progress invariant.
	MaxSteps   int
	MaxSimTime time.Duration

	// Flood makes bank-0 misbehave: with every update it sends, it also
	// sends Flood exact replays of it, Flood updates of the wrong shape,
	// Flood for a round far beyond the job and Flood under the name of a
	// client that never joined. All but the replays must be dropped with
	// their reason; a replay may count only in place of its original.
	// Flood traffic has its own random stream and skips the network's
	// faults, so that a flooded run stays comparable with its seed unflooded.
	Flood int

	// mutate and mutateAgent, set only by tests, rewrite the actions of the
	// aggregator and of the agents before they are checked and carried out:
	// deliberately broken parties, to show that the invariants catch them.
	mutate      func([]aggregator.Action) []aggregator.Action
	mutateAgent func([]agent.MachineAction) []agent.MachineAction
}

// Faults says what the simulated network and hosts do wrong.
type Faults struct {
	Drop    float64       // probability that a message is lost
	Dup     float64       // probability that a message is delivered twice
	Latency time.Duration // base one-way latency
	Jitter  time.Duration // extra latency, uniform in [0, Jitter)
	// Reorder is the probability that a message is held back by up to
	// ReorderBy, so that later messages on its link overtake it.
	Reorder   float64
	ReorderBy time.Duration
	// Partitions, AgentCrashes and AggCrashes are how many of each are
	// scheduled at random times within the job's expected duration; each
	// heals or restarts after a random outage of at most MaxOutage (plus a
	// quarter round). One partition holds at a time: a new one replaces
	// the last, and a heal heals whatever is cut.
	Partitions   int
	AgentCrashes int
	AggCrashes   int
	MaxOutage    time.Duration
	// MidStep is the probability that a crash strikes in the middle of the
	// victim's next step: its state is persisted (the aggregator's
	// snapshot, the agent's ledger entry) but the messages it was about to
	// send are lost.
	MidStep float64
}

// FaultKinds lists the fault kinds FocusedConfig accepts, each the
// focus of one scenario.
func FaultKinds() []string {
	return []string{"drop", "dup", "delay", "reorder", "partition", "agent-crash", "aggregator-crash"}
}

// baseConfig draws the job (not its faults) from the seed.
func baseConfig(seed uint64, r *rand.Rand) Config {
	c := Config{
		Seed: seed, Agents: 3 + r.IntN(3), Rounds: 4 + r.IntN(5),
		RoundTimeout: time.Second, HelloRetry: 300 * time.Millisecond, LocalEpochs: 1 + r.IntN(3),
		Dim: 3 + r.IntN(4), Samples: 24 + r.IntN(40), ModelSigma: 0.5, ModelClip: 2, Delta: 1e-4,
		Faults: Faults{Latency: time.Millisecond, Jitter: 5 * time.Millisecond, MaxOutage: 2 * time.Second},
	}
	if r.IntN(4) == 0 {
		c.MinClients = c.Agents - 1
	}
	switch r.IntN(5) {
	case 0:
		c.Quorum = c.Agents - 1
	case 1:
		c.Buffer = 2 + r.IntN(c.Agents-1)
	}
	switch r.IntN(3) {
	case 0:
		c.Staleness = aggregator.Staleness{Policy: aggregator.StaleDrop}
	case 1:
		c.Staleness = aggregator.Staleness{Policy: aggregator.StaleConstant, Factor: 0.5}
	default:
		c.Staleness = aggregator.Staleness{Policy: aggregator.StalePolynomial, A: 0.5}
	}
	if r.IntN(2) == 0 {
		// A budget that admits k of the model releases (each of μ² =
		// (2·clip/σ)²), so that some agents run out mid-job.
		k := 1 + r.IntN(c.Rounds)
		mu2 := (2 * c.ModelClip / c.ModelSigma) * (2 * c.ModelClip / c.ModelSigma)
		c.Budget.Epsilon, _ = privacy.RDPEpsilon(mu2*(float64(k)+0.5), c.Delta)
	}
	return c
}

// RandomConfig draws a job and a mix of every fault from the seed.
func RandomConfig(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 0xd5)) // the config stream; the run has its own
	c := baseConfig(seed, r)
	f := &c.Faults
	f.Drop = 0.15 * r.Float64()
	f.Dup = 0.15 * r.Float64()
	f.Jitter = time.Duration(1+r.IntN(300)) * time.Millisecond
	f.Reorder = 0.2 * r.Float64()
	f.ReorderBy = c.RoundTimeout / 2
	f.Partitions = r.IntN(3)
	f.AgentCrashes = r.IntN(4)
	f.AggCrashes = r.IntN(3)
	f.MidStep = 0.3
	return c
}

// HealthyConfig draws a job from the seed, on a network that only
// delays messages by a few milliseconds.
func HealthyConfig(seed uint64) Config {
	return baseConfig(seed, rand.New(rand.NewPCG(seed, 0xf0c5)))
}

// FocusedConfig is HealthyConfig with one kind of fault (one of
// FaultKinds) injected hard.
func FocusedConfig(seed uint64, fault string) (Config, error) {
	c := HealthyConfig(seed)
	f := &c.Faults
	switch fault {
	case "drop":
		f.Drop = 0.25
	case "dup":
		f.Dup = 0.3
	case "delay":
		// Up to one and a half round timeouts: updates miss their round
		// and meet the staleness policy.
		f.Jitter = c.RoundTimeout * 3 / 2
	case "reorder":
		f.Reorder, f.ReorderBy = 0.4, c.RoundTimeout/2
	case "partition":
		f.Partitions = 3
	case "agent-crash":
		f.AgentCrashes, f.MidStep = 4, 0.4
	case "aggregator-crash":
		f.AggCrashes, f.MidStep = 3, 0.4
	default:
		return Config{}, fmt.Errorf("dsim: unknown fault %q (want one of %v)", fault, FaultKinds())
	}
	return c, nil
}

func (c *Config) validate() error {
	switch {
	case c.Agents < 1 || c.Rounds < 1:
		return fmt.Errorf("dsim: %d agents and %d rounds", c.Agents, c.Rounds)
	case c.RoundTimeout <= 0 || c.HelloRetry <= 0:
		return fmt.Errorf("dsim: round timeout %v and hello retry %v must be positive", c.RoundTimeout, c.HelloRetry)
	case c.Faults.Drop < 0 || c.Faults.Drop >= 1 || c.Faults.Dup < 0 || c.Faults.Reorder < 0:
		return fmt.Errorf("dsim: fault probabilities %+v", c.Faults)
	case c.Faults.MaxOutage <= 0 && c.Faults.Partitions+c.Faults.AgentCrashes+c.Faults.AggCrashes > 0:
		return fmt.Errorf("dsim: crashes and partitions need a positive MaxOutage")
	}
	if c.MinClients == 0 {
		c.MinClients = c.Agents
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = 200_000
	}
	if c.MaxSimTime == 0 {
		// Faults strike within the horizon and heal within an outage; then
		// every round closes by its deadline. Twice that is generous.
		perRound := c.RoundTimeout + c.Faults.Latency + c.Faults.Jitter + c.Faults.ReorderBy
		c.MaxSimTime = 2*(c.horizon()+c.Faults.MaxOutage+time.Duration(c.Rounds+2)*perRound) + time.Minute
	}
	return nil
}

// horizon is the span within which faults are scheduled: about the job's
// length if every round ran to its deadline.
func (c *Config) horizon() time.Duration { return time.Duration(c.Rounds) * c.RoundTimeout }

// Result is what one simulated job did.
type Result struct {
	Seed       uint64
	Finished   bool
	Rounds     uint64    // rounds closed
	Model      []float32 // the final global model
	ModelRound uint64
	Steps      int
	SimTime    time.Duration
	// Trace is a hash of every step (time, party, event kind) and every
	// model: two runs of one seed must agree on it bit for bit.
	Trace     uint64
	Counters  Counters
	Violation *Violation // the first invariant broken, nil if none
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
	Withheld, BudgetRefusals    int
	LedgerEntries, ReleasesSent int
	Flooded                     int // flood messages that reached the aggregator
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
	c.Rejected = addCounts(c.Rejected, o.Rejected)
	c.Closes = addCounts(c.Closes, o.Closes)
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
