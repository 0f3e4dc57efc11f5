package dsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/privacy"
)

// Strategies the simulator spreads its seeds over (strategyOf).
const (
	StrategyFedAvg   = aggregator.AlgoFedAvg   // FedAvg, with staleness policies and FedBuff
	StrategyCEFedGNN = aggregator.AlgoCEFedGNN // CE-FedGNN: gradient estimators and boundary embeddings
	StrategyLPSFed   = aggregator.AlgoLPSFed   // LPSFed (or lpsfed-bpr): ρ, margins, personalized models
	// FedGSP: spectral descriptors released once per client, collaboration
	// graphs learned from them, personalized models.
	StrategyFedGSP = aggregator.AlgoFedGSP
)

// Strategies lists the strategies, each run by a quarter of the seeds.
func Strategies() []string {
	return []string{StrategyFedAvg, StrategyCEFedGNN, StrategyLPSFed, StrategyFedGSP}
}

// strategyOf is a seed's strategy. Before FedGSP joined, seed%3 picked one
// of the first three. FedGSP takes every fourth block of three consecutive
// seeds ((seed/3)%4 == 3: seeds 9-11, 21-23, ...) and every other seed
// keeps the strategy, job and trace it had, so that a failure reported by
// its seed, the golden traces and a throughput measured on the same seeds
// stay comparable across the change.
func strategyOf(seed uint64) string {
	if (seed/3)%4 == 3 {
		return StrategyFedGSP
	}
	return Strategies()[seed%3]
}

// Config is one simulated job. RandomConfig and FocusedConfig
// derive one from a seed.
type Config struct {
	Seed uint64
	// Algo is the aggregator's algorithm: fedavg, cefedgnn, lpsfed or
	// lpsfed-bpr; Strategy() is its family.
	Algo         string
	Agents       int
	Rounds       int
	MinClients   int // clients that must join before round 1; 0: all
	Quorum       int // 0: every live client
	Buffer       int // FedBuff when positive
	Staleness    aggregator.Staleness
	RoundTimeout time.Duration
	// DeadlineFactor and DeadlineCap adapt the rounds' deadlines
	// (aggregator.Config.DeadlineFactor); 0: fixed at RoundTimeout.
	DeadlineFactor float64
	DeadlineCap    time.Duration
	HelloRetry     time.Duration
	LocalEpochs    int
	Dim, Samples   int // the agents' logistic regression
	ModelSigma     float64
	ModelClip      float64
	GradSigma      float64        // CE-FedGNN's gradient estimator
	MarginSigma    float64        // LPSFed's scalars
	Budget         privacy.Budget // per-client budget; zero: none
	Delta          float64
	// CE-FedGNN: Links are the pairs of agents (by index) whose graphs
	// share edges, so that they exchange boundary embeddings of width
	// EmbDim at noise EmbSigma.
	Links    [][2]int
	EmbDim   int
	EmbSigma float64
	// LPSFed: the reference kernel's length Phi, rebuilt every RefEvery
	// rounds (0: once); FreezeRounds publish no model.
	Phi, RefEvery, FreezeRounds int
	// FedGSP: every agent releases, with its first update, descriptors of
	// DescOrders·DescPrincipal·4 rows of DescDim values at noise
	// DescSigma (one release per client: its cost falls on the first
	// round); FedGSP is the aggregator's graph learning.
	DescOrders, DescPrincipal, DescDim int
	DescSigma                          float64
	FedGSP                             aggregator.FedGSPConfig
	// SecAgg runs every round with secure aggregation (issue 31): the
	// aggregator's machine with aggregator.Config.SecAgg on and every
	// agent with an agent.SecAggConfig, identities and randomness drawn
	// from the seed (secure.go). FedGSP refuses it.
	SecAgg bool
	// StrictSecure makes an update sent in the clear in a secure job a
	// violation (InvSecureClear) rather than a count: the agent core
	// still does so when a round could not open its secure aggregation.
	StrictSecure bool
	// ServerOpt is the averaging strategies' server optimizer
	// (aggregator.Config.ServerOpt; serverOptOf picks the seeds).
	ServerOpt aggregator.ServerOpt
	Faults    Faults
	// Trace records a readable trace of the run (Result.Text): every
	// message sent, delivered or lost, every step, crash and close.
	Trace bool
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
	// mutateReject rewrites the reason the aggregator's validator gives.
	mutateReject func(reason string) string
	// shadowCheck, set only by tests, compares every update released in
	// the clear with shadowRelease's reading of it: the ground truth the
	// secure sums are checked against must be what the gate releases.
	shadowCheck bool
	// noStageTicks, set only by tests, wakes the aggregator at its
	// Machine.Deadline alone, without the secure stages' ticks (stepAgg).
	noStageTicks bool
	// loseStrategyState, set only by tests, restores the aggregator
	// without its strategy's state (a checkpoint that forgot the server
	// optimizer's moments), which InvRestoreDiffers must catch.
	loseStrategyState bool
	// fixedDeadlines, set only by tests, runs the aggregator with fixed
	// deadlines while the checker expects adaptive ones.
	fixedDeadlines bool
}

// Strategy is the family of the configured algorithm (lpsfed-bpr is
// lpsfed's).
func (c *Config) Strategy() string {
	if c.Algo == aggregator.AlgoLPSFedBPR {
		return StrategyLPSFed
	}
	return c.Algo
}

// personalizes reports whether the job sends each client a model of its
// own (aggregator.Config.Personalizes) instead of a global one.
func (c *Config) personalizes() bool {
	return c.Strategy() == StrategyLPSFed || c.Strategy() == StrategyFedGSP
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

// baseConfig draws the job (not its faults) from the seed: strategyOf
// picks the strategy, the rest of the job comes from r.
func baseConfig(seed uint64, r *rand.Rand) Config {
	c := Config{
		Seed: seed, Algo: strategyOf(seed), Agents: 3 + r.IntN(3), Rounds: 4 + r.IntN(5),
		RoundTimeout: time.Second, HelloRetry: 300 * time.Millisecond, LocalEpochs: 1 + r.IntN(3),
		Dim: 3 + r.IntN(4), Samples: 24 + r.IntN(40), ModelSigma: 0.5, ModelClip: 2, GradSigma: 0.5, MarginSigma: 4, Delta: 1e-4,
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
	budget := r.IntN(2) == 0
	k := 1 + r.IntN(c.Rounds)
	c.strategyParams(rand.New(rand.NewPCG(seed, 0x57a7)))
	c.SecAgg = secureSeed(seed) && c.Strategy() != StrategyFedGSP
	c.ServerOpt = serverOptOf(seed, c)
	if budget {
		// A budget that admits k rounds' releases (each of μ² =
		// (2·clip/σ)²: the model's, CE-FedGNN's gradient estimator's,
		// LPSFed's margin; LPSFed's ρ, sent once per kernel, comes on
		// top), so that some agents run out mid-job. FedGSP's descriptors,
		// released once beside the first model, are left out: they cost
		// 0.5 to 4 model releases (strategyParams), so with k small they
		// are refused and the update goes without them, and otherwise
		// they shorten the rounds the model can be released for.
		sq := func(x float64) float64 { return x * x }
		mu2 := sq(2 * c.ModelClip / c.ModelSigma)
		switch c.Strategy() {
		case StrategyCEFedGNN:
			mu2 += sq(2 * c.ModelClip / c.GradSigma)
		case StrategyLPSFed:
			mu2 += sq(2 / c.MarginSigma)
		}
		c.Budget.Epsilon, _ = privacy.RDPEpsilon(mu2*(float64(k)+0.5), c.Delta)
	}
	return c
}

// strategyParams draws what the strategy adds to the job, from its own
// stream so that the job's other draws do not depend on the strategy.
func (c *Config) strategyParams(r *rand.Rand) {
	switch c.Algo {
	case StrategyCEFedGNN:
		// A ring, some chords: every agent has a neighbour.
		c.EmbDim, c.EmbSigma = 2+r.IntN(3), 0.1+0.4*r.Float64()
		for i := range c.Agents {
			for j := i + 1; j < c.Agents; j++ {
				if j == i+1 || r.IntN(3) == 0 {
					c.Links = append(c.Links, [2]int{i, j})
				}
			}
		}
	case StrategyLPSFed:
		if r.IntN(2) == 0 {
			c.Algo = aggregator.AlgoLPSFedBPR
		}
		// Personalization mixes each client's own update of the round: no
		// buffer, late updates dropped.
		c.Buffer, c.Staleness = 0, aggregator.Staleness{Policy: aggregator.StaleDrop}
		c.Phi, c.RefEvery, c.FreezeRounds = 3+r.IntN(6), r.IntN(3), r.IntN(2)
	case StrategyFedGSP:
		c.Buffer, c.Staleness = 0, aggregator.Staleness{Policy: aggregator.StaleDrop} // personalizes, as LPSFed
		// The parameter layout [c_0 .. c_K | rest] must fit the logistic
		// model's Dim+1 parameters: (K+1)·d ≤ Dim+1.
		c.DescDim = 1 + r.IntN(2)
		c.DescOrders = 1 + r.IntN(min(3, (c.Dim+1)/c.DescDim-1))
		c.DescPrincipal = 1 + r.IntN(2)
		// σ so that the release costs 0.5 to 4 model releases: μ² =
		// (2·sqrt(rows)/σ)² against the model's (2·clip/σ_model)².
		rows := float64(4 * c.DescOrders * c.DescPrincipal)
		share := 0.5 + 3.5*r.Float64()
		c.DescSigma = 2 * math.Sqrt(rows) / (2 * c.ModelClip / c.ModelSigma * math.Sqrt(share))
		// Graphs learned for none, some or all of the rounds; the layout
		// configured in a third of the jobs, else fixed by the first
		// descriptors accepted.
		c.FedGSP = aggregator.FedGSPConfig{Gamma: 0.5 + 3*r.Float64(), Alpha: r.Float64(), Beta: 3 * r.Float64(),
			GraphRounds: r.IntN(c.Rounds + 2)}
		if r.IntN(3) == 0 {
			c.FedGSP.Orders, c.FedGSP.Dim = c.DescOrders, c.DescDim
		}
	}
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
	case c.Algo == "":
		return fmt.Errorf("dsim: no algorithm")
	case c.Agents < 1 || c.Rounds < 1:
		return fmt.Errorf("dsim: %d agents and %d rounds", c.Agents, c.Rounds)
	case c.RoundTimeout <= 0 || c.HelloRetry <= 0:
		return fmt.Errorf("dsim: round timeout %v and hello retry %v must be positive", c.RoundTimeout, c.HelloRetry)
	case c.Faults.Drop < 0 || c.Faults.Drop >= 1 || c.Faults.Dup < 0 || c.Faults.Reorder < 0:
		return fmt.Errorf("dsim: fault probabilities %+v", c.Faults)
	case c.Faults.MaxOutage <= 0 && c.Faults.Partitions+c.Faults.AgentCrashes+c.Faults.AggCrashes > 0:
		return fmt.Errorf("dsim: crashes and partitions need a positive MaxOutage")
	case c.SecAgg && c.Strategy() == StrategyFedGSP:
		return fmt.Errorf("dsim: fedgsp runs without secure aggregation")
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
		if c.DeadlineFactor > 0 {
			perRound += c.deadlineCap() // a round may wait up to its cap
		}
		if c.SecAgg {
			perRound += 2 * c.RoundTimeout // the masked inputs' and the reveals' waits
		}
		c.MaxSimTime = 2*(c.horizon()+c.Faults.MaxOutage+time.Duration(c.Rounds+2)*perRound) + time.Minute
	}
	return nil
}

// deadlineCap is the longest a round may stay open when deadlines adapt.
func (c *Config) deadlineCap() time.Duration {
	if c.DeadlineCap > 0 {
		return c.DeadlineCap
	}
	return aggregator.DefaultDeadlineCapX * c.RoundTimeout
}

// AdaptiveConfig is RandomConfig with adaptive deadlines (factor 3, a cap
// of six floors) on a network slow enough that most updates miss the
// floor: rounds must be extended and sized by what was measured rather
// than close empty.
func AdaptiveConfig(seed uint64) Config {
	c := RandomConfig(seed)
	c.DeadlineFactor, c.DeadlineCap = 3, 6*c.RoundTimeout
	c.Faults.Latency = c.RoundTimeout * 3 / 4
	c.Faults.Jitter = c.RoundTimeout
	return c
}

// horizon is the span within which faults are scheduled: about the job's
// length if every round ran to its deadline.
func (c *Config) horizon() time.Duration { return time.Duration(c.Rounds) * c.RoundTimeout }
