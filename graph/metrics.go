package graph

import (
	"math"
	"slices"
)

// EdgeHomophily is the fraction of edges, among those whose two endpoints
// are both labelled, that join nodes of the same class (Zhu et al. 2020's
// h_edge). It is NaN when no edge has two labelled endpoints.
func EdgeHomophily(d *Dataset) float64 {
	same, labelled := homophilyCounts(d)
	if labelled == 0 {
		return math.NaN()
	}
	return float64(same) / float64(labelled)
}

// homophilyCounts counts stored adjacency entries with both endpoints
// labelled, and those among them inside one class. On a symmetric adjacency
// each undirected edge counts twice in both, leaving the ratio unchanged.
func homophilyCounts(d *Dataset) (same, labelled int) {
	for u := 0; u < d.Adj.Rows; u++ {
		yu := d.Labels[u]
		if yu < 0 {
			continue
		}
		cols, _ := d.Adj.Row(u)
		for _, v := range cols {
			if yv := d.Labels[v]; yv >= 0 {
				labelled++
				if yv == yu {
					same++
				}
			}
		}
	}
	return same, labelled
}

// DegreeSummary describes the degree distribution of an adjacency (degree =
// stored entries per row, so neighbours for a symmetric graph).
type DegreeSummary struct {
	Min      int     `json:"min"`
	Max      int     `json:"max"`
	Mean     float64 `json:"mean"`
	Median   float64 `json:"median"`
	Isolated int     `json:"isolated"` // nodes of degree 0
}

// DegreeStats summarises the degrees of adj; all zero for an empty graph.
func DegreeStats(adj *CSR) DegreeSummary {
	n := adj.Rows
	if n == 0 {
		return DegreeSummary{}
	}
	deg := make([]int, n)
	s := DegreeSummary{Min: math.MaxInt}
	for i := range deg {
		deg[i] = adj.Degree(i)
		s.Min = min(s.Min, deg[i])
		s.Max = max(s.Max, deg[i])
		if deg[i] == 0 {
			s.Isolated++
		}
	}
	s.Mean = float64(adj.NNZ()) / float64(n)
	slices.Sort(deg)
	s.Median = float64(deg[(n-1)/2]+deg[n/2]) / 2
	return s
}

// DatasetSummary is what `graphfed data stats --dataset` reports.
type DatasetSummary struct {
	Name        string `json:"name"`
	Nodes       int    `json:"nodes"`
	Edges       int    `json:"edges"` // undirected: stored entries / 2
	Features    int    `json:"features"`
	FeatureNNZ  int    `json:"feature_nnz"`
	Classes     int    `json:"classes"`
	ClassCounts []int  `json:"class_counts"`
	Unlabelled  int    `json:"unlabelled"`
	Train       int    `json:"train"`
	Val         int    `json:"val"`
	Test        int    `json:"test"`
	// EdgeHomophily is 0 rather than NaN when LabelledEdges is 0, so that
	// the summary always encodes as JSON.
	EdgeHomophily float64       `json:"edge_homophily"`
	LabelledEdges int           `json:"labelled_edges"` // stored entries with both ends labelled
	Degree        DegreeSummary `json:"degree"`
}

// DatasetStats summarises d.
func DatasetStats(d *Dataset) DatasetSummary {
	s := DatasetSummary{
		Name: d.Name, Nodes: d.N(), Edges: d.Adj.NNZ() / 2,
		Features: d.NumFeatures(), FeatureNNZ: d.Features.NNZ(),
		Classes: d.Classes, ClassCounts: make([]int, d.Classes),
		Train: d.Count(SplitTrain), Val: d.Count(SplitVal), Test: d.Count(SplitTest),
		Degree: DegreeStats(d.Adj),
	}
	for _, y := range d.Labels {
		if y < 0 || int(y) >= d.Classes {
			s.Unlabelled++
			continue
		}
		s.ClassCounts[y]++
	}
	same, labelled := homophilyCounts(d)
	s.LabelledEdges = labelled
	if labelled > 0 {
		s.EdgeHomophily = float64(same) / float64(labelled)
	}
	return s
}

// ClientSummary describes one client's share of a partition.
type ClientSummary struct {
	Client        int `json:"client"`
	Nodes         int `json:"nodes"`
	Edges         int `json:"edges"`          // undirected edges inside the client
	CrossEdges    int `json:"cross_edges"`    // edges with one endpoint here
	BoundaryNodes int `json:"boundary_nodes"` // local nodes with a cross edge
	Neighbours    int `json:"neighbours"`     // distinct clients reached by cross edges
	Train         int `json:"train"`
	Val           int `json:"val"`
	Test          int `json:"test"`
}

// PartitionSummary describes a whole partition.
type PartitionSummary struct {
	Clients       []ClientSummary `json:"clients"`
	Nodes         int             `json:"nodes"`
	InternalEdges int             `json:"internal_edges"` // undirected, summed over clients
	CrossEdges    int             `json:"cross_edges"`    // undirected, each counted once
	// CrossShare is CrossEdges / (InternalEdges + CrossEdges): the share of
	// the graph's edges that federated training cannot see locally.
	CrossShare float64 `json:"cross_share"`
	MinNodes   int     `json:"min_nodes"`
	MaxNodes   int     `json:"max_nodes"`
	// Imbalance is MaxNodes over the mean client size; 1 is perfect.
	Imbalance float64 `json:"imbalance"`
}

// PartitionStats summarises clients as SplitByOwner returns them. A cross
// edge listed at both of its clients counts once; one listed at only one
// (a subset of clients was passed) still counts.
func PartitionStats(clients []*ClientGraph) PartitionSummary {
	s := PartitionSummary{Clients: make([]ClientSummary, len(clients)), MinNodes: math.MaxInt}
	cross := make(map[[2]int32]struct{})
	for k, cg := range clients {
		d := cg.Data
		cs := ClientSummary{
			Client: cg.Client, Nodes: d.N(), Edges: d.Adj.NNZ() / 2, CrossEdges: len(cg.Cross),
			Train: d.Count(SplitTrain), Val: d.Count(SplitVal), Test: d.Count(SplitTest),
		}
		owners := make(map[int32]struct{})
		lastBoundary := int32(-1)
		for _, e := range cg.Cross {
			if e.Local != lastBoundary { // Cross is ordered by local id
				cs.BoundaryNodes++
				lastBoundary = e.Local
			}
			owners[e.RemoteOwner] = struct{}{}
			if int(e.Local) < len(cg.Global) {
				a, b := cg.Global[e.Local], e.Remote
				cross[[2]int32{min(a, b), max(a, b)}] = struct{}{}
			}
		}
		cs.Neighbours = len(owners)
		s.Clients[k] = cs
		s.Nodes += cs.Nodes
		s.InternalEdges += cs.Edges
		s.MinNodes = min(s.MinNodes, cs.Nodes)
		s.MaxNodes = max(s.MaxNodes, cs.Nodes)
	}
	s.CrossEdges = len(cross)
	if total := s.InternalEdges + s.CrossEdges; total > 0 {
		s.CrossShare = float64(s.CrossEdges) / float64(total)
	}
	if len(clients) == 0 {
		s.MinNodes = 0
	} else if s.Nodes > 0 {
		s.Imbalance = float64(s.MaxNodes) * float64(len(clients)) / float64(s.Nodes)
	}
	return s
}
