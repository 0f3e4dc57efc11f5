package job

import (
	"errors"
	"fmt"
	"math"
	"time"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/deploy"
	"graphfed/privacy"
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

// Privacy is what a job asks of its gates. The zero value is the task's
// private default: for an AML job whose algorithm releases boundary
// embeddings (cefedgnn, fedgnn-st), ε = deploy.DefaultAMLNodeTarget per
// node at the 90th-percentile metric distance, with the exact accountant
// at δ = deploy.DefaultDelta.
type Privacy struct {
	Delta         float64 // 0: deploy.DefaultDelta
	BudgetEpsilon float64 // per-client ε cap on the model channel; 0: none
	// Accountant is "rdp" or "exact"; "": exact under a node target, rdp
	// otherwise.
	Accountant string
	// NodeTarget is the per-node ε target of embedding releases. nil: the
	// default target, unless EmbSigma is set (a fixed σ0 instead); zero or
	// negative: none.
	NodeTarget *float64
	// σ and clips; 0: deploy.DefaultPrivacy's.
	EmbSigma, ModelSigma, ModelClip, GradSigma, DescSigma float64
	// NoiseSeed fixes the noise (reproducible, marked non-private); nil:
	// crypto/rand.
	NoiseSeed *uint64
}

// resolveAML is p for an AML job under algo with releases planned
// embedding releases: the gates' settings, node target decided.
func (p Privacy) resolveAML(algo string, releases int) (SimPrivacy, error) {
	sp := SimPrivacy{Delta: p.Delta, Budget: privacy.Budget{Epsilon: p.BudgetEpsilon}, ModelSigma: p.ModelSigma,
		ModelClip: p.ModelClip, GradSigma: p.GradSigma, EmbSigma: p.EmbSigma, DescSigma: p.DescSigma, NoiseSeed: p.NoiseSeed}
	var target float64
	switch t := p.NodeTarget; {
	case !deploy.ExchangesEmbeddings(algo):
		if t != nil && *t > 0 {
			return sp, fmt.Errorf("job: privacy: a node ε target applies to algorithms that release embeddings (cefedgnn, fedgnn-st), not %s", algo)
		}
	case t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0)):
		return sp, fmt.Errorf("job: privacy: node ε target %v; want a finite number (0: none)", *t)
	case t != nil && *t > 0 && p.EmbSigma != 0:
		return sp, errors.New("job: privacy: a fixed σ0 (EmbSigma) and a node ε target both choose σ0: give one")
	case t != nil:
		target = max(*t, 0)
	case p.EmbSigma == 0:
		target = deploy.DefaultAMLNodeTarget
	}
	acc := p.Accountant
	if acc == "" {
		acc = privacy.RDP.String()
		if target > 0 {
			acc = privacy.Exact.String()
		}
	}
	kind, err := privacy.ParseAccountantKind(acc)
	if err != nil {
		return sp, fmt.Errorf("job: privacy: %w", err)
	}
	sp.Accountant = kind
	if target > 0 {
		sp.NodeTarget, sp.EmbReleases = target, releases
	}
	return sp, nil
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
