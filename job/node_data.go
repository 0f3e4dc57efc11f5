package job

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"graphfed/graph"
)

// LoadNodeDataset loads a node-classification dataset from dir (the TSV
// layout) or generates scenario "csbm" from csbm; it returns the dataset
// and the name runs are reported under.
func LoadNodeDataset(dir, scenario string, csbm graph.CSBMConfig, seed uint64) (*graph.Dataset, string, error) {
	switch {
	case dir != "" && scenario != "":
		return nil, "", fmt.Errorf("give either --dataset or --scenario, not both")
	case dir != "":
		d, err := graph.LoadTSV(dir)
		if err != nil {
			return nil, "", err
		}
		return d, filepath.Base(filepath.Clean(dir)), nil
	case scenario == "csbm":
		d, err := graph.GenerateCSBM(csbm, rand.New(rand.NewPCG(seed, 0xc5b3)))
		if err != nil {
			return nil, "", err
		}
		return d, "csbm", nil
	case scenario != "":
		return nil, "", fmt.Errorf("unknown --scenario %q for node classification (want csbm)", scenario)
	}
	return nil, "", fmt.Errorf("give --dataset DIR or --scenario csbm")
}

// PartitionMethods lists the partition methods for node datasets.
const PartitionMethods = "louvain, random, metis or metis-overlap"

// SplitHelp documents the split spec for node datasets.
const SplitHelp = "public (the dataset's own split) or random:TRAIN,VAL,TEST (e.g. FedGSP's random:0.2,0.4,0.4): a --seed random split of the largest connected component, drawn before partitioning"

// ResplitDataset applies a split spec (SplitHelp) to d before it is
// partitioned.
func ResplitDataset(d *graph.Dataset, split string, seed uint64) (*graph.Dataset, error) {
	spec, err := graph.ParseSplitSpec(split)
	if err != nil {
		return nil, err
	}
	return graph.ApplySplit(d, spec, seed)
}

// PartitionDataset splits d into clients by method (PartitionMethods);
// metis-overlap clients share nodes and have no cross edges.
func PartitionDataset(d *graph.Dataset, clients int, method string, seed uint64) ([]*graph.ClientGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9a27))
	var owner []int32
	var err error
	switch method {
	case "louvain":
		owner, err = graph.PartitionLouvain(d.Adj, clients, rng)
	case "random":
		owner, err = graph.PartitionRandom(d.N(), clients, rng)
	case "metis":
		owner, err = graph.PartitionMetis(d.Adj, clients, graph.MetisOptions{}, rng)
	case "metis-overlap":
		members, err := graph.PartitionMetisOverlap(d.Adj, clients, graph.MetisOptions{}, rng)
		if err != nil {
			return nil, err
		}
		return graph.SplitByMembers(d, members)
	default:
		return nil, fmt.Errorf("unknown --partition %q (want %s)", method, PartitionMethods)
	}
	if err != nil {
		return nil, err
	}
	return graph.SplitByOwner(d, owner, clients)
}
