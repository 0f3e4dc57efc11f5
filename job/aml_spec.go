package job

import (
	"io"
	"time"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/deploy"
)

// AMLSpec is an AML job. Every zero field is unset and takes the
// library's default (RunAML resolves them; Resolve shows the result).
type AMLSpec struct {
	// Sim holds what every simulated job shares: job id, algorithm (""
	// : DefaultAMLAlgo), rounds (0: DefaultAMLRounds), local steps K
	// (LocalEpochs; 0: from the banks' training transactions,
	// deploy.AMLLocalSteps), seed, deadlines, quorum, robust aggregation,
	// transport, durability. RunAML sets its learners, ids, evaluation
	// cadence, pace, privacy and callbacks.
	Sim SimConfig
	// Conns is how the parties reach the embedded server (InProcessConns:
	// auto, tcp or in-process; "": auto).
	Conns   string
	World   AMLWorld
	Learner amllearner.Config // zero fields: DefaultAMLLearner's; Seed, Work, OnFinalScore are RunAML's
	// EvalEvery scores the model every this many rounds (0: every round;
	// the final model always).
	EvalEvery int
	Privacy   Privacy
	// SlowFactor slows bank i's training by its factor (fault scenarios).
	SlowFactor map[int]float64
	// Out, when set, is the run's directory: a generated world goes to
	// Out/world (unless World.Dir says otherwise) and the ledger is
	// exported to Out/ledger.jsonl.
	Out      string
	Progress Progress // nil: none shown
	// Seed, when set, is the job's seed (Sim.Seed) and seeds the noise
	// too, unless Privacy.NoiseSeed says otherwise; nil: Sim.Seed (0: 1),
	// noise from crypto/rand.
	Seed *uint64
	// Notes, when set, takes the job's human notes: the node target's
	// plan before the run, the recall by typology after it.
	Notes io.Writer
	// Settings and Changed are the command's settings, for the run
	// directory's summary.
	Settings map[string]string
	Changed  []string
	// OnPlan, if set, hears the resolved job before it starts: the
	// privacy plan (node target, planned releases) and K.
	OnPlan func(AMLPlan)
}

// Defaults every simulated job shares.
const (
	DefaultJobID        = "sim"
	DefaultRoundTimeout = 30 * time.Second // a round's deadline, and the adaptive deadline's floor
)

// resolveSim fills the unset fields every simulated job shares.
func resolveSim(sc SimConfig) SimConfig {
	if sc.Job == "" {
		sc.Job = DefaultJobID
	}
	if sc.RoundTimeout == 0 {
		sc.RoundTimeout = DefaultRoundTimeout
	}
	if sc.Seed == 0 {
		sc.Seed = 1
	}
	return sc
}

// AML defaults of the main job: CE-FedGNN, 12 rounds.
const (
	DefaultAMLAlgo   = aggregator.AlgoCEFedGNN
	DefaultAMLRounds = 12
)

// DefaultAMLLearner is the learner every bank of an AML job trains unless
// told otherwise: deploy.DefaultAMLConfig (GIN, 32 hidden units, Adam at
// 5e-3, 512 seed transactions per step, fan-out 5×5, CE-FedGNN's γ) with
// the agent's defaults for the rest.
func DefaultAMLLearner() amllearner.Config { return deploy.DefaultAMLConfig() }

// resolveLearner fills c's unset fields from DefaultAMLLearner, and its
// exchange cadence from the release and the rounds.
func resolveLearner(c amllearner.Config, rounds int) amllearner.Config {
	d := DefaultAMLLearner()
	if c.Kind == "" {
		c.Kind = d.Kind
	}
	if c.Hidden == 0 {
		c.Hidden = d.Hidden
	}
	if c.LR == 0 {
		c.LR = d.LR
	}
	if c.BatchSize == 0 {
		c.BatchSize = d.BatchSize
	}
	if c.FanOut == nil {
		c.FanOut = d.FanOut
	}
	if c.Gamma == 0 {
		c.Gamma = d.Gamma
	}
	if c.Release == "" {
		c.Release = amllearner.DefaultRelease
	}
	if c.ExchangeEvery == 0 {
		c.ExchangeEvery = amllearner.DefaultExchangeEvery(c.Release, rounds)
	}
	return c
}

// AMLPlan is an AML job as resolved, before it runs.
type AMLPlan struct {
	Algo       string
	Rounds     int
	LocalSteps int   // K
	TrainRows  []int // each bank's training transactions
	Banks      int
	Rows       int // the world's transactions
	Accounts   int
	Privacy    SimPrivacy
	Learner    amllearner.Config
}
