package job

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/telemetry"
)

// AggregatorSpec is a job's aggregator against a NATS server (`graphfed
// aggregator`): one party of a deployment, the banks' agents running
// elsewhere. Start from DefaultAggregatorSpec, the command's defaults:
// RunAggregator resolves only the fields marked "": or 0: below and takes
// every other as given, so that a zero the aggregator refuses (no rounds,
// no timeout) is refused, and a zero that is a setting (a fixed deadline,
// no norm bound) is kept.
type AggregatorSpec struct {
	Job        string // [a-z0-9-]{1,64}
	Task       string // "": AggregatorTask(Algo)
	Algo       string
	Rounds     int
	MinClients int // clients that must join before round 1
	Quorum     int // updates that close a round; 0: every live client
	// RoundTimeout is a round's deadline, and the adaptive deadline's
	// floor.
	RoundTimeout time.Duration
	// DeadlineFactor adapts the deadline to the measured update times
	// (aggregator.Config.DeadlineFactor); 0: fixed at RoundTimeout.
	// DefaultAggregatorSpec: DefaultDeadlineFactor.
	DeadlineFactor float64
	DeadlineCap    time.Duration // 0: aggregator.DefaultDeadlineCapX × RoundTimeout
	FinalWait      time.Duration // bound on waiting for the clients' final scores; 0: 10s
	// Staleness weighs late updates (Policy "": drop them).
	Staleness aggregator.Staleness
	Seed      uint64   // shared model initialisation seed, and LPSFed's reference graph's
	Clients   []string // the ids allowed to join; empty: any
	Robust    aggregator.Robust
	// ServerOpt is the averaging algorithms' server optimizer
	// (aggregator.Config.ServerOpt); zero: none.
	ServerOpt aggregator.ServerOpt
	// SecAgg is the secure-aggregation mode: SecAggAuto ("" too: on
	// wherever the algorithm's close is a sum), SecAggOn, SecAggOff.
	SecAgg   string
	Contract AggregatorContract
	// FreezeRounds are a recommendation job's first rounds in which
	// nothing is distributed.
	FreezeRounds int
	// LPSFed configures the personalising algorithms (lpsfed,
	// lpsfed-bpr); Seed 0: the job's Seed.
	LPSFed aggregator.LPSFedConfig
	FedGSP aggregator.FedGSPConfig // fedgsp's server side
	Conn   deploy.ConnOptions
	// Keyring is the job's keyring.json: every envelope received must
	// carry its sender's valid signature; "": none are checked.
	Keyring      string
	Durable      bool
	Recovery     deploy.DurableOptions // with Durable
	Blobs        deploy.BlobOptions
	CreateLedger bool // create the job's ledger stream before the job starts
	Resume       bool // continue a job id that ran before (deploy.AggregatorOptions.Resume)
	// StartMetrics, if set, is called once the spec checks out, before
	// the aggregator connects: the live metrics it records (the caller
	// serves them, and stops serving after it has written the report).
	StartMetrics func() (*telemetry.Metrics, error)
	Progress     Progress // nil: none shown
}

// AggregatorContract is the job's contract as the aggregator states it
// (aggregator.Contract): the model schema before any hello, the largest
// training size a bank may declare, and the banks' clip and noise, which
// bound every update's norm.
type AggregatorContract struct {
	// Schema is the job's model schema HASH:PARAMS; "": the first accepted
	// hello's, which a job on a keyring refuses.
	Schema       string
	MaxTrainSize float64 // 0: the aggregator's (1e15)
	// ModelClip, ModelSigma and GradSigma are the banks' (the agent's
	// defaults in DefaultAggregatorSpec); ModelClip 0: no norm bound.
	ModelClip, ModelSigma, GradSigma float64
	// Grad says whether updates carry a gradient estimator: "none" or
	// "shared"; "": the task's learners decide (deploy.GradPolicy).
	Grad string
}

// Defaults of a deployed aggregator.
const (
	DefaultNATSURL          = "nats://127.0.0.1:4222"
	DefaultAggregatorAlgo   = aggregator.AlgoFedAvg
	DefaultAggregatorRounds = 100
	// DefaultDeadlineFactor is the adaptive deadline's factor of sim and
	// aggregator: a round may stay open three times the median measured
	// update time, never less than the round timeout.
	DefaultDeadlineFactor = 3
)

// DefaultAggregatorSpec is `graphfed aggregator` without flags but the
// job id.
func DefaultAggregatorSpec() AggregatorSpec {
	return AggregatorSpec{
		Algo: DefaultAggregatorAlgo, Rounds: DefaultAggregatorRounds, MinClients: 1, RoundTimeout: DefaultRoundTimeout,
		DeadlineFactor: DefaultDeadlineFactor, Seed: 1,
		Staleness: aggregator.Staleness{Policy: aggregator.StaleDrop, Factor: 0.5, A: 0.5},
		Contract:  AggregatorContract{ModelClip: agent.DefaultModelClip, ModelSigma: agent.DefaultModelSigma, GradSigma: agent.DefaultGradSigma},
		// The reference graph's settings are the LPSFed paper's.
		FreezeRounds: 2, LPSFed: aggregator.LPSFedConfig{Phi: 128, Seed: 1,
			StrictStats: aggregator.ReferenceStats{Users: 5000, Items: 5000, Edges: 100000}},
		Conn:     deploy.ConnOptions{URL: DefaultNATSURL},
		Recovery: deploy.DefaultDurable(),
	}
}

// AggregatorTask is the task an aggregator of algo runs when not told:
// rec for the LPSFed algorithms, node otherwise.
func AggregatorTask(algo string) string {
	if algo == aggregator.AlgoLPSFed || algo == aggregator.AlgoLPSFedBPR {
		return deploy.TaskRec
	}
	return deploy.TaskNode
}

// resolve fills the fields of s whose zero is no setting: the task, and
// the LPSFed reference graph's seed.
func (s AggregatorSpec) resolve() AggregatorSpec {
	if s.Task == "" {
		s.Task = AggregatorTask(s.Algo)
	}
	if s.LPSFed.Seed == 0 {
		s.LPSFed.Seed = s.Seed
	}
	return s
}

// roundConfig is the aggregator's round policy of the resolved spec s;
// what the contract leaves open is logged.
func (s AggregatorSpec) roundConfig(log zerolog.Logger) (aggregator.Config, error) {
	round := aggregator.Config{Algo: s.Algo, Rounds: s.Rounds, MinClients: s.MinClients, Quorum: s.Quorum,
		RoundTimeout: s.RoundTimeout, Staleness: s.Staleness, DeadlineFactor: s.DeadlineFactor, DeadlineCap: s.DeadlineCap,
		Robust: s.Robust, ServerOpt: s.ServerOpt}
	if s.Task == deploy.TaskRec {
		round.FreezeRounds = s.FreezeRounds
	}
	if round.Personalizes() {
		round.LPSFed = s.LPSFed
	}
	if s.Algo == aggregator.AlgoFedGSP {
		round.FedGSP = s.FedGSP
	}
	var err error
	if round.SecAgg.On, err = resolveSecAgg(s.SecAgg, s.Algo, s.Robust, s.Keyring != "" && s.Conn.Creds != ""); err != nil {
		return round, err
	}
	round.Contract, err = s.Contract.contract(log, s.Task, s.Algo, s.Keyring != "")
	return round, err
}

// contract is the aggregator.Contract c states for a job of task under
// algo; what it leaves open is logged.
func (c AggregatorContract) contract(log zerolog.Logger, task, algo string, keyring bool) (aggregator.Contract, error) {
	k := aggregator.Contract{MaxTrainSize: c.MaxTrainSize, Clip: c.ModelClip, Sigma: c.ModelSigma, GradSigma: c.GradSigma,
		Grad: deploy.GradPolicy(task, algo, c.Grad)}
	switch {
	case c.Schema != "":
		var err error
		if k.SchemaHash, k.NumParams, err = aggregator.ParseSchema(c.Schema); err != nil {
			return aggregator.Contract{}, err
		}
	case keyring:
		// A job whose parties hold keys fixes its schema up front: one
		// bank's key was enough to set it with the first hello (evil/1),
		// refusing every honest bank for good.
		return aggregator.Contract{}, fmt.Errorf("a job on a keyring fixes its model schema before any hello: give --schema HASH:PARAMS " +
			"(`graphfed agent --print-schema --job ID --task TASK --data DIR` prints a bank's; every bank's must agree)")
	default:
		log.Warn().Msg("no --schema: the first accepted hello sets the job's model schema (restrict who may say hello with --clients or --keyring)")
	}
	if c.ModelClip == 0 {
		log.Warn().Msg("no --model-clip: the norms of the banks' updates are not bounded")
	}
	return k, nil
}
