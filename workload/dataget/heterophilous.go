package dataget

import (
	"fmt"
	"math"

	"graphfed/graph"
)

// maxNPZMember bounds one decompressed array of an npz (tolokers' largest
// is 8 MB; squirrel's features 45 MB).
const maxNPZMember = 256 << 20

// convertNPZGraph builds a dataset from an npz of Platonov et al.'s
// heterophilous-graphs repository: node_features (n×f), node_labels (n),
// edges (E×2, one row per undirected edge, which their loader makes
// bidirected), and train/val/test masks (splits×n), of which split 0 is
// kept. Self loops and repeated edges are dropped; a graph of two classes
// is scored by ROC-AUC, as their code does, others by accuracy.
func convertNPZGraph(name string, raw []byte) (*graph.Dataset, error) {
	arrs, err := ReadNPZ(raw, maxNPZMember)
	if err != nil {
		return nil, err
	}
	return graphFromArrays(name, arrs)
}

// graphFromArrays is convertNPZGraph on the npz's arrays.
func graphFromArrays(name string, arrs map[string]Array) (*graph.Dataset, error) {
	for _, k := range []string{"node_features", "node_labels", "edges", "train_masks", "val_masks", "test_masks"} {
		if _, ok := arrs[k]; !ok {
			return nil, fmt.Errorf("npz has no %s", k)
		}
	}
	fa := arrs["node_features"]
	if len(fa.Shape) != 2 {
		return nil, fmt.Errorf("node_features of shape %v, want 2-d", fa.Shape)
	}
	n, nf := fa.Shape[0], fa.Shape[1]
	// The labels' length bounds n by real data before anything of size n
	// is allocated (a features array of shape (10⁹, 0) holds no bytes).
	if la := arrs["node_labels"]; len(la.Shape) != 1 || la.Shape[0] != n {
		return nil, fmt.Errorf("node_labels of shape %v for %d nodes", la.Shape, n)
	}
	feats, err := fa.Float32s()
	if err != nil {
		return nil, fmt.Errorf("node_features: %w", err)
	}
	d := &graph.Dataset{Name: name, Labels: make([]int32, n), Split: make([]graph.Split, n)}
	if d.Features, err = denseToCSR(feats, n, nf); err != nil {
		return nil, fmt.Errorf("node_features: %w", err)
	}
	if err := npzLabels(d, arrs["node_labels"]); err != nil {
		return nil, err
	}
	if d.Adj, err = npzEdges(arrs["edges"], n); err != nil {
		return nil, err
	}
	for _, m := range []struct {
		key string
		s   graph.Split
	}{{"train_masks", graph.SplitTrain}, {"val_masks", graph.SplitVal}, {"test_masks", graph.SplitTest}} {
		if err := npzMask(d, arrs[m.key], m.key, m.s); err != nil {
			return nil, err
		}
	}
	d.Metric = graph.MetricAccuracy
	if d.Classes == 2 {
		d.Metric = graph.MetricROCAUC
	}
	return d, d.Validate()
}

// denseToCSR keeps the non-zero entries of a row-major n×nf matrix.
func denseToCSR(v []float32, n, nf int) (*graph.CSR, error) {
	m := &graph.CSR{Rows: n, Cols: nf, RowPtr: make([]int, n+1)}
	for i := range n {
		for j, x := range v[i*nf : (i+1)*nf] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("node %d column %d is not finite", i, j)
			}
			if x != 0 {
				m.ColIdx = append(m.ColIdx, int32(j))
				m.Val = append(m.Val, x)
			}
		}
		m.RowPtr[i+1] = len(m.ColIdx)
	}
	if m.Val == nil {
		m.Val = []float32{}
	}
	return m, nil
}

func npzLabels(d *graph.Dataset, a Array) error {
	ys, err := a.Int64s()
	if err != nil || len(a.Shape) != 1 || len(ys) != len(d.Labels) {
		return fmt.Errorf("node_labels: want %d integer labels, have shape %v (%v)", len(d.Labels), a.Shape, err)
	}
	for i, y := range ys {
		if y < 0 || y > 1<<20 {
			return fmt.Errorf("node_labels: node %d has label %d", i, y)
		}
		d.Labels[i] = int32(y)
		d.Classes = max(d.Classes, int(y)+1)
	}
	return nil
}

func npzEdges(a Array, n int) (*graph.CSR, error) {
	es, err := a.Int64s()
	if err != nil || len(a.Shape) != 2 || a.Shape[1] != 2 {
		return nil, fmt.Errorf("edges: want E×2 integers, have shape %v (%v)", a.Shape, err)
	}
	edges := make([]graph.Edge, 0, len(es)/2)
	for k := 0; k < len(es); k += 2 {
		u, v := es[k], es[k+1]
		if u < 0 || v < 0 || u >= int64(n) || v >= int64(n) {
			return nil, fmt.Errorf("edges: row %d (%d, %d) outside [0,%d)", k/2, u, v, n)
		}
		edges = append(edges, graph.Edge{U: int32(u), V: int32(v)})
	}
	adj, err := graph.FromEdges(n, edges, true)
	if err != nil {
		return nil, fmt.Errorf("edges: %w", err)
	}
	return adj, nil
}

// npzMask marks split 0 of a splits×n mask; a node in two parts of the
// split is an error.
func npzMask(d *graph.Dataset, a Array, key string, s graph.Split) error {
	n := len(d.Split)
	if len(a.Shape) != 2 || a.Shape[1] != n || a.Shape[0] == 0 || a.Kind != "b1" {
		return fmt.Errorf("%s: want splits×%d booleans, have %s of shape %v", key, n, a.Kind, a.Shape)
	}
	for i, b := range a.Data[:n] {
		if b == 0 {
			continue
		}
		if d.Split[i] != graph.SplitNone {
			return fmt.Errorf("%s: node %d is already in %s", key, i, d.Split[i])
		}
		d.Split[i] = s
	}
	return nil
}
