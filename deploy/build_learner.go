package deploy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/aml/bank"
	"graphfed/bus"
	"graphfed/cefedgnn"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/learner/node"
	"graphfed/lpsfed"
	"graphfed/workload/rec"
)

// Data is one party's training data: a directory on disk, as a deployed
// agent holds it, or what a simulation split a world into in memory.
// Exactly one field is set.
type Data struct {
	// Dir is the party's data directory: for task aml a bank directory
	// (`graphfed split aml`), for node a graph in the TSV layout
	// (`graphfed partition`), for rec a LightGCN directory (`graphfed split
	// rec`).
	Dir string
	// Node is a client graph with its cross-client edges; Clients names
	// every client of the job in the order the cross edges number them
	// (the CE-FedGNN learner's exchange partners).
	Node    *graph.ClientGraph
	Clients []string
	Bank    *amllearner.Data // task aml: a bank's view (AMLData)
	Rec     *rec.Prepared    // task rec: a client's eigenpairs and kernel (rec.Prepare)
}

// Party is who a learner is built for: its client id and the seed of its
// learner stream (seeds.Party(job seed, i, seeds.Learner) in a
// simulation; a deployed agent's --seed).
type Party struct {
	ID   string
	Seed uint64
}

// BuildLearner builds the learner of task under algo for party p from
// data, with the options o (only the task's are read). It is the one
// place every entry point builds a learner: the simulation, the agent,
// job files and the scenarios. The algorithm decides how the learner
// trains (NodeConfigFor, CEFedConfigFor, AMLConfigFor, lpsfed.LossFor).
func BuildLearner(task, algo string, data Data, o LearnerOptions, p Party, log zerolog.Logger) (Learned, error) {
	if err := CheckTaskAlgo(task, algo); err != nil {
		return Learned{}, err
	}
	var (
		l   Learned
		err error
	)
	switch task {
	case TaskAML:
		l, err = amlLearner(algo, data, o, p)
	case TaskNode:
		l, err = nodeLearner(algo, data, o, p)
	case TaskRec:
		l, err = recLearner(algo, data, o, p, log)
	}
	if err != nil {
		where := data.Dir
		if where == "" {
			where = "client " + p.ID
		}
		return Learned{}, fmt.Errorf("deploy: %s learner for %s: %w", task, where, err)
	}
	return l, nil
}

// errNoData is BuildLearner's complaint when data holds nothing.
var errNoData = errors.New("no data directory and no data in memory")

// nodeLearner builds a node classifier: on a client graph in memory any
// algorithm, on a TSV directory only those that exchange no embeddings. A
// TSV directory holds the client's nodes and local edges only: nothing
// says which of its nodes have neighbours at which other client, so
// CE-FedGNN's exchange cannot be set up from it, and the embedding
// algorithms are refused rather than run silently without exchange.
func nodeLearner(algo string, data Data, o LearnerOptions, p Party) (Learned, error) {
	var cg *graph.ClientGraph
	switch {
	case data.Node != nil:
		cg = data.Node
	case data.Dir != "" && ExchangesEmbeddings(algo):
		return Learned{}, fmt.Errorf("algorithm %s exchanges embeddings across clients, and a TSV client directory "+
			"records no cross-client edges: run --algo %s from a directory (%s on node graphs: graphfed sim)", algo, strings.Join(TSVAlgorithms(), ", "), algo)
	case data.Dir != "":
		d, err := graph.LoadTSV(data.Dir)
		if err != nil {
			return Learned{}, err
		}
		cg = &graph.ClientGraph{Data: d}
	default:
		return Learned{}, errNoData
	}
	d := cg.Data
	stats := map[string]any{"nodes": d.N(), "classes": d.Classes, "train": d.Count(graph.SplitTrain)}
	if algo == aggregator.AlgoFedGSP {
		name, cfg, err := o.FedGSP.Resolve(d)
		if err != nil {
			return Learned{}, err
		}
		cfg.Seed = p.Seed
		l, err := NewFedGSPLearner(d, cfg)
		if err != nil {
			return Learned{}, err
		}
		l.ShareDescriptors(o.FedGSP.Descriptors)
		stats["fedgsp_preset"], stats["metric"] = name, cfg.Metric
		return Learned{Learner: l, Stats: stats}, nil
	}
	kind := o.NodeKind
	if kind == "" {
		kind = "adam"
		if ExchangesEmbeddings(algo) {
			kind = "cefed"
		}
	}
	switch kind {
	case "adam":
		if ExchangesEmbeddings(algo) {
			return Learned{}, fmt.Errorf("algorithm %s needs the cefed node learner", algo)
		}
		cfg := NodeConfigFor(algo, o.Node)
		cfg.Seed = p.Seed
		nl, err := node.New(d, cfg)
		if err != nil {
			return Learned{}, err
		}
		return Learned{Learner: nl, Stats: stats}, nil
	case "cefed":
		if data.Node == nil || data.Clients == nil {
			return Learned{}, errors.New("the cefed node learner needs a client graph with its cross edges and the job's client ids (a simulation)")
		}
		cfg := CEFedConfigFor(algo, o.CEFed)
		cfg.Seed = p.Seed
		l, err := cefedgnn.New(data.Node, data.Clients, cfg)
		if err != nil {
			return Learned{}, err
		}
		return Learned{Learner: l, Stats: stats}, nil
	}
	return Learned{}, fmt.Errorf("unknown node learner %q (want adam or cefed)", kind)
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

// amlLearner builds a bank's learner from its view in memory or its bank
// directory; the bank's neighbours are the banks its rows name, whom it
// exchanges embeddings with directly under cefedgnn and fedgnn-st.
func amlLearner(algo string, data Data, o LearnerOptions, p Party) (Learned, error) {
	var d amllearner.Data
	stats := map[string]any{}
	id := ""
	switch {
	case data.Bank != nil:
		d = *data.Bank
	case data.Dir != "":
		v, err := bank.Load(data.Dir)
		if err != nil {
			return Learned{}, err
		}
		if d, err = AMLData(v); err != nil {
			return Learned{}, err
		}
		id = v.ID
		stats = map[string]any{"bank": v.Bank, "rows": v.Graph.NumEdges(), "accounts": v.Graph.NumAccounts(), "neighbours": v.Neighbours()}
	default:
		return Learned{}, errNoData
	}
	cfg := AMLConfigFor(algo, o.AML)
	cfg.Seed = p.Seed
	l, err := amllearner.New(d, cfg)
	if err != nil {
		return Learned{}, err
	}
	if data.Bank != nil {
		return Learned{Learner: l}, nil
	}
	c := &countingAML{Learner: l, msgs: map[string]int{}, rows: map[string]int{}}
	return Learned{Learner: c, ID: id, Stats: stats, Counters: c.counters}, nil
}

// recLearner builds a client's LPSFed learner with the loss algo trains
// with, from its prepared eigenpairs and kernel or from its LightGCN
// directory (prepared here as the simulation prepares it, rec.Prepare).
func recLearner(algo string, data Data, o LearnerOptions, p Party, log zerolog.Logger) (Learned, error) {
	var prep rec.Prepared
	stats := map[string]any{}
	switch {
	case data.Rec != nil:
		prep = *data.Rec
	case data.Dir != "":
		d, err := rec.LoadClient(data.Dir)
		if err != nil {
			return Learned{}, err
		}
		val, err := rec.LoadValidation(data.Dir, d) // `split rec --split random:…` writes one
		if err != nil {
			return Learned{}, err
		}
		if prep, err = rec.Prepare(d, rec.PrepareOptions{Phi: o.Rec.Phi, Seed: o.Rec.EigenSeed, Val: val}); err != nil {
			return Learned{}, err
		}
		stats = map[string]any{"users": d.Users, "items": d.Items, "train": d.Train.NNZ(),
			"test_users": prep.TestUsers, "phi": prep.Vectors.Cols, "components": prep.Components}
	default:
		return Learned{}, errNoData
	}
	mc := o.Rec.Model
	mc.Loss = lpsfed.LossFor(algo)
	mc.Seed = p.Seed
	m, err := lpsfed.NewModel(prep.Data, prep.Vectors, mc)
	if err != nil {
		return Learned{}, err
	}
	l, err := lpsfed.NewLearner(lpsfed.LearnerConfig{Strict: o.Rec.Strict, Log: log}, m, prep.Kernel)
	if err != nil {
		return Learned{}, err
	}
	return Learned{Learner: l, Stats: stats}, nil
}
