package graph

import "fmt"

// Split says which evaluation set a node belongs to.
type Split uint8

const (
	SplitNone Split = iota // unlabelled for training and evaluation
	SplitTrain
	SplitVal
	SplitTest
)

// String names the split as the TSV layout spells it.
func (s Split) String() string {
	switch s {
	case SplitTrain:
		return "train"
	case SplitVal:
		return "val"
	case SplitTest:
		return "test"
	}
	return "none"
}

// Dataset is a node-classification graph: an undirected adjacency without
// self loops, a sparse N×F feature matrix, labels in [0, Classes) or -1, and
// a split per node.
type Dataset struct {
	Name     string
	Adj      *CSR // N×N, symmetric, no self loops
	Features *CSR // N×F; Val set
	Labels   []int32
	Classes  int
	Split    []Split
	// Metric is how the dataset's results are scored (meta.json's
	// "metric"): MetricAccuracy, or MetricROCAUC for the binary
	// heterophilic graphs (minesweeper, tolokers). Empty means accuracy.
	Metric string
}

// The metrics a dataset may name.
const (
	MetricAccuracy = "accuracy"
	MetricROCAUC   = "roc_auc"
)

// ScoreMetric is the metric d's results are scored by: d.Metric, or
// accuracy when the dataset names none.
func (d *Dataset) ScoreMetric() string {
	if d.Metric == "" {
		return MetricAccuracy
	}
	return d.Metric
}

// N is the number of nodes.
func (d *Dataset) N() int { return d.Adj.Rows }

// NumFeatures is the feature dimension F.
func (d *Dataset) NumFeatures() int { return d.Features.Cols }

// Count returns how many nodes are in split s.
func (d *Dataset) Count(s Split) int {
	n := 0
	for _, x := range d.Split {
		if x == s {
			n++
		}
	}
	return n
}

// Validate checks that every part has the node count and ranges it claims.
func (d *Dataset) Validate() error {
	if d.Adj == nil || d.Features == nil {
		return fmt.Errorf("graph: dataset %q: missing adjacency or features", d.Name)
	}
	if err := d.Adj.Validate(); err != nil {
		return fmt.Errorf("graph: dataset %q: adjacency: %w", d.Name, err)
	}
	if err := d.Features.Validate(); err != nil {
		return fmt.Errorf("graph: dataset %q: features: %w", d.Name, err)
	}
	n := d.Adj.Rows
	if d.Adj.Cols != n || d.Features.Rows != n || len(d.Labels) != n || len(d.Split) != n {
		return fmt.Errorf("graph: dataset %q: inconsistent sizes: adj %dx%d, features %d rows, %d labels, %d splits",
			d.Name, d.Adj.Rows, d.Adj.Cols, d.Features.Rows, len(d.Labels), len(d.Split))
	}
	for i, y := range d.Labels {
		if y < -1 || int(y) >= d.Classes {
			return fmt.Errorf("graph: dataset %q: node %d label %d outside [-1,%d)", d.Name, i, y, d.Classes)
		}
	}
	return nil
}

// ClientGraph is one client's share of a partitioned dataset. Local node ids
// are 0..N-1; Global maps them back. Data holds only the edges internal to
// the client; edges whose other endpoint lives at another client are listed
// in Cross, because CE-FedGNN exchanges embeddings across exactly those.
type ClientGraph struct {
	Client int
	Global []int32 // local id -> global id
	Data   *Dataset
	Cross  []CrossEdge
}

// CrossEdge is an edge from a node this client hosts to a node another client
// hosts.
type CrossEdge struct {
	Local       int32 // local id at this client
	Remote      int32 // global id of the other endpoint
	RemoteOwner int32 // client hosting Remote
}
