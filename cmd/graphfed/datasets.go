package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/spf13/cobra"

	"graphfed/graph"
)

// csbmFlags size the generated --scenario csbm graph; the defaults are
// graph.DefaultCSBM, and --csbm-nodes 1000000 gives every one of 10,000
// clients about 100 nodes.
type csbmFlags struct{ cfg graph.CSBMConfig }

func (c *csbmFlags) register(cmd *cobra.Command) {
	c.cfg = graph.DefaultCSBM()
	f := cmd.Flags()
	f.IntVar(&c.cfg.Nodes, "csbm-nodes", c.cfg.Nodes, "--scenario csbm: nodes")
	f.IntVar(&c.cfg.Classes, "csbm-classes", c.cfg.Classes, "--scenario csbm: classes")
	f.IntVar(&c.cfg.Features, "csbm-features", c.cfg.Features, "--scenario csbm: dense Gaussian features per node")
	f.Float64Var(&c.cfg.AvgDegree, "csbm-degree", c.cfg.AvgDegree, "--scenario csbm: mean degree")
	f.Float64Var(&c.cfg.Homophily, "csbm-homophily", c.cfg.Homophily, "--scenario csbm: fraction of edges inside a class")
}

// nodeDataset loads --dataset DIR or generates --scenario csbm from csbm.
func nodeDataset(dir, scenario string, csbm graph.CSBMConfig, seed uint64) (*graph.Dataset, string, error) {
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

// partitionMethods lists --partition's values for node datasets.
const partitionMethods = "louvain, random, metis or metis-overlap"

// splitHelp documents --split for node datasets.
const splitHelp = "public (the dataset's own split) or random:TRAIN,VAL,TEST (e.g. FedGSP's random:0.2,0.4,0.4): a --seed random split of the largest connected component, drawn before partitioning"

// resplitDataset applies --split to d before it is partitioned.
func resplitDataset(d *graph.Dataset, split string, seed uint64) (*graph.Dataset, error) {
	spec, err := graph.ParseSplitSpec(split)
	if err != nil {
		return nil, err
	}
	return graph.ApplySplit(d, spec, seed)
}

// partitionDataset splits d into clients by method (partitionMethods);
// metis-overlap clients share nodes and have no cross edges.
func partitionDataset(d *graph.Dataset, clients int, method string, seed uint64) ([]*graph.ClientGraph, error) {
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
		return nil, fmt.Errorf("unknown --partition %q (want %s)", method, partitionMethods)
	}
	if err != nil {
		return nil, err
	}
	return graph.SplitByOwner(d, owner, clients)
}
