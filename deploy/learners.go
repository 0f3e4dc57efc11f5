package deploy

import (
	"fmt"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
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
	Node node.Config // task node; its Seed is Seed
	// NodeKind is task node's learner: "adam" (Node: GCN or SAGE with
	// Adam) or "cefed" (CEFed: CE-FedGNN's SAGE-mean with moving averages
	// and Eq. 9 updates); "": cefed for the algorithms that exchange
	// embeddings, adam otherwise.
	NodeKind string
	CEFed    cefedgnn.Config   // task node with NodeKind cefed
	AML      amllearner.Config // task aml; its Seed is Seed, and γ is 1 under fedgnn-st
	FedGSP   FedGSPOptions     // task node under fedgsp
	Rec      RecOptions        // task rec
}

// FedGSPOptions choose a FedGSP client's settings: a preset, the fields
// given on top of it, or a configuration already resolved (a simulation
// resolves "select", federated selection, once for every client).
type FedGSPOptions struct {
	// Preset names the settings (fedgsp.Preset); "select" (the default)
	// or "": federated selection where a job runs it, else the default
	// row (fedgsp.Choose); "auto", the legacy choice kept by name only:
	// fedgsp.PresetFor the data's name and homophily.
	Preset string
	Set    fedgsp.Overrides
	// Resolved, when set, is used as it is: Preset and Set are ignored.
	Resolved *fedgsp.Config
	// Descriptors, when set, is shared by every learner built with these
	// options, so that a job that builds several learners on the same
	// client data (its selection's trials, then the job) computes each
	// client's descriptors once (fedgsp.DescriptorCache).
	Descriptors *fedgsp.DescriptorCache `json:"-"`
}

// Resolve is the preset's name and the client settings for data d, with
// the given fields on top; the score metric is d's.
func (o FedGSPOptions) Resolve(d *graph.Dataset) (string, fedgsp.Config, error) {
	if o.Resolved != nil {
		return o.Preset, *o.Resolved, nil
	}
	name, c, err := fedgsp.Choose(o.Preset, d)
	if err != nil {
		return "", c, fmt.Errorf("fedgsp preset: %w", err)
	}
	o.Set.Apply(&c)
	c.Metric = d.ScoreMetric()
	if err := c.Validate(); err != nil {
		return name, c, err
	}
	return name, c, nil
}

// DefaultLearnerOptions are the defaults `graphfed agent` starts from:
// the node learner's, the AML learner's as `graphfed sim --scenario aml`
// runs it, and LPSFed's paper setting.
func DefaultLearnerOptions() LearnerOptions {
	return LearnerOptions{Seed: 1, Node: node.DefaultConfig(), CEFed: cefedgnn.DefaultConfig(), AML: DefaultAMLConfig(),
		FedGSP: FedGSPOptions{Preset: fedgsp.PresetSelect}, Rec: DefaultRecOptions()}
}

// DefaultAMLConfig is the AML learner `graphfed sim --scenario aml` runs,
// the one place its defaults are written: GIN, 32 hidden units, Adam at
// 5e-3, 512 seed transactions per step, fan-out 5×5, CE-FedGNN's γ,
// layer-0 feature releases (amllearner.DefaultRelease) and the learner's
// own pooling, batch stratification and evaluation sample.
func DefaultAMLConfig() amllearner.Config {
	return amllearner.Config{Kind: "gin", Hidden: 32, LR: 5e-3, BatchSize: 512, FanOut: []int{5, 5},
		Gamma: cefedgnn.DefaultConfig().Gamma, Release: amllearner.DefaultRelease, PoolWeight: amllearner.DefaultPoolWeight,
		PosFraction: amllearner.DefaultPosFraction, EvalSample: amllearner.DefaultEvalSample,
		Beta: amllearner.DefaultBeta, Eta: amllearner.DefaultEta}
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
