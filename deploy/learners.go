package deploy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/bus"
	"graphfed/cefedgnn"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/learner"
	"graphfed/learner/node"
)

// LearnerOptions say how an agent's learner is built from the one data
// directory its organisation holds. Only the settings of the agent's task
// are read.
type LearnerOptions struct {
	// Dir is the client's data: for task aml a bank directory `graphfed
	// split aml` wrote (DIR/bank-<id>), for node a graph in the TSV layout
	// (`graphfed partition` writes one per client), for rec a LightGCN
	// directory of the client's own users and items (`graphfed split rec`).
	Dir string
	// Seed is the learner's local randomness (dropout, sampling, local
	// tables); the parties of a job must not share one.
	Seed uint64
	Node node.Config       // task node; its Seed is Seed
	AML  amllearner.Config // task aml; its Seed is Seed, and γ is 1 under fedgnn-st
	// FedGSPPreset names task node's FedGSP settings (fedgsp.Preset), or
	// "auto" or "": fedgsp.PresetFor the data's name and homophily.
	FedGSPPreset string
	Rec          RecOptions // task rec
}

// DefaultLearnerOptions are the defaults `graphfed agent` starts from:
// the node learner's, the AML learner's as `graphfed sim --scenario aml`
// runs it, and LPSFed's paper setting.
func DefaultLearnerOptions() LearnerOptions {
	return LearnerOptions{Seed: 1, Node: node.DefaultConfig(), AML: DefaultAMLConfig(), Rec: DefaultRecOptions()}
}

// DefaultAMLConfig is the AML learner `graphfed sim --scenario aml` runs:
// GIN, 32 hidden units, Adam at 5e-3, 512 seed transactions per step,
// fan-out 5×5, CE-FedGNN's γ, an exchange every round.
func DefaultAMLConfig() amllearner.Config {
	return amllearner.Config{Kind: "gin", Hidden: 32, LR: 5e-3, BatchSize: 512, FanOut: []int{5, 5},
		Gamma: cefedgnn.DefaultConfig().Gamma}
}

// DefaultAlgo is the algorithm a task runs unless told otherwise: FedAvg
// for node classification, CE-FedGNN for AML, LPSFed for recommendation.
func DefaultAlgo(task string) string {
	switch task {
	case TaskAML:
		return aggregator.AlgoCEFedGNN
	case TaskRec:
		return aggregator.AlgoLPSFed
	}
	return aggregator.AlgoFedAvg
}

// Learned is a learner built from a data directory.
type Learned struct {
	Learner learner.Learner
	// ID is the client id the data names (an AML bank directory is one
	// bank's), empty when it names none.
	ID string
	// Stats describe the data for a report (rows, users, eigenpairs...).
	Stats map[string]any
	// Counters, when set, report what the learner did during the run (an
	// AML bank: the boundary embeddings it received), for the final report.
	Counters func() map[string]any
}

// NewLearner builds the learner of task under algo from o.Dir.
func NewLearner(task, algo string, o LearnerOptions, log zerolog.Logger) (Learned, error) {
	if err := CheckTaskAlgo(task, algo); err != nil {
		return Learned{}, err
	}
	if o.Dir == "" {
		return Learned{}, fmt.Errorf("deploy: %s learner: no data directory", task)
	}
	var (
		l   Learned
		err error
	)
	switch task {
	case TaskAML:
		l, err = amlLearner(algo, o)
	case TaskNode:
		l, err = nodeLearner(algo, o)
	case TaskRec:
		l, err = recLearner(algo, o, log)
	}
	if err != nil {
		return Learned{}, fmt.Errorf("deploy: %s learner from %s: %w", task, o.Dir, err)
	}
	return l, nil
}

// nodeLearner builds a node classifier on a TSV client graph. A TSV
// directory holds the client's nodes and local edges only: nothing says
// which of its nodes have neighbours at which other client, so CE-FedGNN's
// exchange cannot be set up from it and the embedding algorithms are
// refused rather than run silently without exchange.
func nodeLearner(algo string, o LearnerOptions) (Learned, error) {
	if ExchangesEmbeddings(algo) {
		return Learned{}, fmt.Errorf("algorithm %s exchanges embeddings across clients, and a TSV client directory "+
			"records no cross-client edges: run --algo %s from a directory (%s on node graphs: graphfed sim)", algo, strings.Join(TSVAlgorithms(), ", "), algo)
	}
	d, err := graph.LoadTSV(o.Dir)
	if err != nil {
		return Learned{}, err
	}
	if algo == aggregator.AlgoFedGSP {
		return fedgspLearner(d, o)
	}
	cfg := NodeConfigFor(algo, o.Node)
	cfg.Seed = o.Seed
	nl, err := node.New(d, cfg)
	if err != nil {
		return Learned{}, err
	}
	return Learned{Learner: nl, Stats: map[string]any{"nodes": d.N(), "classes": d.Classes,
		"train": d.Count(graph.SplitTrain)}}, nil
}

// errNoLearner is NewAgent's complaint when neither a learner nor a data
// directory was given.
var errNoLearner = errors.New("no learner and no data directory")

// fedgspLearner builds FedGSP's spectral learner on a client graph.
func fedgspLearner(d *graph.Dataset, o LearnerOptions) (Learned, error) {
	name, cfg, err := fedgsp.Choose(o.FedGSPPreset, d)
	if err != nil {
		return Learned{}, err
	}
	cfg.Metric, cfg.Seed = d.ScoreMetric(), o.Seed
	l, err := NewFedGSPLearner(d, cfg)
	if err != nil {
		return Learned{}, err
	}
	return Learned{Learner: l, Stats: map[string]any{"nodes": d.N(), "classes": d.Classes,
		"train": d.Count(graph.SplitTrain), "fedgsp_preset": name, "metric": cfg.Metric}}, nil
}

// NewFedGSPLearner builds a FedGSP learner and checks that its
// descriptors will pass validation: an update carries at most
// bus.MaxDescriptorValues of them (the payload limit is sized from the
// parameters), and a rejected first update would lose them for good.
func NewFedGSPLearner(d *graph.Dataset, cfg fedgsp.Config) (*fedgsp.Learner, error) {
	l, err := fedgsp.NewLearner(d, cfg)
	if err != nil {
		return nil, err
	}
	n := 4 * cfg.Orders * cfg.Principal * d.NumFeatures()
	if limit := bus.MaxDescriptorValues(l.NumParams()); n > limit {
		return nil, fmt.Errorf("fedgsp: descriptors of %d values (4·K·kpr·d = 4·%d·%d·%d) exceed the %d an update may carry "+
			"for a model of %d parameters: raise the hidden width or lower the principal directions or orders",
			n, cfg.Orders, cfg.Principal, d.NumFeatures(), limit, l.NumParams())
	}
	return l, nil
}
