package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// CSBMConfig parameterises the contextual stochastic block model (Deshpande
// et al. 2018), graphfed's default demo and test graph: classes of equal
// size, Gaussian features around a class mean, and edges of which a chosen
// fraction join nodes of the same class.
type CSBMConfig struct {
	Nodes, Classes, Features int
	// AvgDegree is the mean number of neighbours; the graph has
	// round(Nodes·AvgDegree/2) undirected edges.
	AvgDegree float64
	// Homophily is the fraction of edges inside a class (edge homophily):
	// 1/Classes is a class-blind graph, 0 a fully heterophilous one.
	Homophily float64
	// FeatureSignal is the norm of each class mean; the noise is N(0, I), so
	// it is the signal-to-noise ratio of the features alone.
	FeatureSignal float64
	// TrainFrac and ValFrac are per-class shares of the split; the rest is
	// test.
	TrainFrac, ValFrac float64
}

// DefaultCSBM is sized so that features alone give a mediocre classifier and
// the graph adds a lot: a GCN should clearly beat an MLP on it, which is what
// the demos and tests want to see.
func DefaultCSBM() CSBMConfig {
	return CSBMConfig{
		Nodes: 3000, Classes: 5, Features: 64,
		AvgDegree: 8, Homophily: 0.8, FeatureSignal: 1,
		TrainFrac: 0.2, ValFrac: 0.2,
	}
}

// Validate reports the first parameter GenerateCSBM cannot honour.
func (c CSBMConfig) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.Classes < 1:
		return fmt.Errorf("graph: csbm: %d classes, want at least 1", c.Classes)
	case c.Nodes < 2*c.Classes || c.Nodes > math.MaxInt32:
		return fmt.Errorf("graph: csbm: %d nodes for %d classes, want 2 per class and at most %d", c.Nodes, c.Classes, math.MaxInt32)
	case c.Features < 1:
		return fmt.Errorf("graph: csbm: %d features, want at least 1", c.Features)
	case !finite(c.AvgDegree) || c.AvgDegree < 0:
		return fmt.Errorf("graph: csbm: average degree %v, want finite and >= 0", c.AvgDegree)
	case !(c.Homophily >= 0 && c.Homophily <= 1):
		return fmt.Errorf("graph: csbm: homophily %v outside [0,1]", c.Homophily)
	case c.Classes == 1 && c.Homophily < 1 && c.AvgDegree > 0:
		return fmt.Errorf("graph: csbm: homophily %v needs edges between classes, but there is 1 class", c.Homophily)
	case !finite(c.FeatureSignal) || c.FeatureSignal < 0:
		return fmt.Errorf("graph: csbm: feature signal %v, want finite and >= 0", c.FeatureSignal)
	case !(c.TrainFrac >= 0 && c.ValFrac >= 0 && c.TrainFrac+c.ValFrac <= 1):
		return fmt.Errorf("graph: csbm: train %v + val %v, want non-negative fractions summing to at most 1", c.TrainFrac, c.ValFrac)
	}
	// Rejection sampling of distinct pairs stalls near a complete graph; a
	// quarter of the possible pairs is far beyond any useful CSBM.
	if limit := float64(c.Nodes) * float64(c.Nodes-1) / 8; float64(c.Nodes)*c.AvgDegree/2 > limit {
		return fmt.Errorf("graph: csbm: average degree %v too high for %d nodes (at most %v)", c.AvgDegree, c.Nodes, 2*limit/float64(c.Nodes))
	}
	if int64(c.Nodes)*int64(c.Features) > math.MaxInt32 {
		return fmt.Errorf("graph: csbm: %d nodes x %d features exceed 2^31 stored values", c.Nodes, c.Features)
	}
	return nil
}

// GenerateCSBM draws a dataset from cfg. Labels are balanced (sizes differ by
// at most one) and shuffled; features are stored as a full CSR with Val;
// exactly round(Homophily·m) of the m edges are intra-class; the split is
// stratified by class. Everything comes from rng.
func GenerateCSBM(cfg CSBMConfig, rng *rand.Rand) (*Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n, k := cfg.Nodes, cfg.Classes

	labels := make([]int32, n)
	for v := range labels {
		labels[v] = int32(v % k)
	}
	rng.Shuffle(n, func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	byClass := make([][]int32, k)
	for v, y := range labels {
		byClass[y] = append(byClass[y], int32(v))
	}

	edges, err := csbmEdges(cfg, labels, byClass, rng)
	if err != nil {
		return nil, err
	}
	adj, err := FromEdges(n, edges, true)
	if err != nil {
		return nil, fmt.Errorf("graph: csbm: %w", err)
	}

	d := &Dataset{
		Name:     "csbm",
		Adj:      adj,
		Features: csbmFeatures(cfg, labels, rng),
		Labels:   labels,
		Classes:  k,
		Split:    StratifiedSplit(labels, cfg.TrainFrac, cfg.ValFrac, rng),
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("graph: csbm: %w", err)
	}
	return d, nil
}

// csbmEdges samples distinct undirected edges: the first endpoint uniformly,
// the second uniformly within its class (intra) or outside it (inter).
func csbmEdges(cfg CSBMConfig, labels []int32, byClass [][]int32, rng *rand.Rand) ([]Edge, error) {
	n := cfg.Nodes
	m := int(math.Round(float64(n) * cfg.AvgDegree / 2))
	intra := int(math.Round(cfg.Homophily * float64(m)))
	edges := make([]Edge, 0, m)
	seen := make(map[uint64]struct{}, m)
	// Classes hold >= 2 nodes and the graph is at most a quarter full (see
	// Validate), yet one class can fill up when homophily is 1; the attempt
	// budget turns that into an error instead of a hang.
	budget := 50*m + 1000
	for len(edges) < m {
		if budget--; budget < 0 {
			return nil, fmt.Errorf("graph: csbm: placed %d of %d edges; too dense for %d nodes in %d classes",
				len(edges), m, n, cfg.Classes)
		}
		u := int32(rng.IntN(n))
		var v int32
		if len(edges) < intra {
			same := byClass[labels[u]]
			v = same[rng.IntN(len(same))]
		} else {
			v = int32(rng.IntN(n))
			if labels[v] == labels[u] {
				continue
			}
		}
		if u == v {
			continue
		}
		a, b := min(u, v), max(u, v)
		key := uint64(a)<<32 | uint64(b)
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		edges = append(edges, Edge{a, b})
	}
	return edges, nil
}

// csbmFeatures gives class c the mean FeatureSignal·u_c for a random unit
// vector u_c and adds standard normal noise to every coordinate.
func csbmFeatures(cfg CSBMConfig, labels []int32, rng *rand.Rand) *CSR {
	n, k, f := cfg.Nodes, cfg.Classes, cfg.Features
	means := make([]float64, k*f)
	for c := 0; c < k; c++ {
		mu := means[c*f : (c+1)*f]
		var norm float64
		for norm == 0 {
			for j := range mu {
				mu[j] = rng.NormFloat64()
				norm += mu[j] * mu[j]
			}
		}
		scale := cfg.FeatureSignal / math.Sqrt(norm)
		for j := range mu {
			mu[j] *= scale
		}
	}
	m := &CSR{Rows: n, Cols: f, RowPtr: make([]int, n+1), ColIdx: make([]int32, n*f), Val: make([]float32, n*f)}
	for v := 0; v < n; v++ {
		mu := means[int(labels[v])*f:]
		base := v * f
		for j := 0; j < f; j++ {
			m.ColIdx[base+j] = int32(j)
			m.Val[base+j] = float32(mu[j] + rng.NormFloat64())
		}
		m.RowPtr[v+1] = base + f
	}
	return m
}
