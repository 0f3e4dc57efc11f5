package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"graphfed/graph"
)

// nodeDataset loads --dataset DIR or generates --scenario csbm.
func nodeDataset(dir, scenario string, seed uint64) (*graph.Dataset, string, error) {
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
		d, err := graph.GenerateCSBM(graph.DefaultCSBM(), rand.New(rand.NewPCG(seed, 0xc5b3)))
		if err != nil {
			return nil, "", err
		}
		return d, "csbm", nil
	case scenario != "":
		return nil, "", fmt.Errorf("unknown --scenario %q for node classification (want csbm)", scenario)
	}
	return nil, "", fmt.Errorf("give --dataset DIR or --scenario csbm")
}

// partitionDataset splits d into clients by method.
func partitionDataset(d *graph.Dataset, clients int, method string, seed uint64) ([]*graph.ClientGraph, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9a27))
	var owner []int32
	var err error
	switch method {
	case "louvain":
		owner, err = graph.PartitionLouvain(d.Adj, clients, rng)
	case "random":
		owner, err = graph.PartitionRandom(d.N(), clients, rng)
	default:
		return nil, fmt.Errorf("unknown --partition %q (want louvain or random)", method)
	}
	if err != nil {
		return nil, err
	}
	return graph.SplitByOwner(d, owner, clients)
}
