package main

import (
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
