package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SplitByOwner cuts d into one ClientGraph per client according to owner
// (node -> client, as the partitioners return). (It is not called Split
// because that name is the per-node split type.)
//
// Local ids follow ascending global ids, so Global is sorted and each local
// adjacency row stays sorted without re-sorting. Data.Adj holds the edges
// internal to the client; every edge whose other endpoint lives elsewhere is
// listed once per direction in the hosting client's Cross, ordered by local
// id then remote id. Features, labels and the split (the per-client
// train/val/test masks) are copied, so clients never alias d. A client that
// owns no node gets an empty graph.
func SplitByOwner(d *Dataset, owner []int32, clients int) ([]*ClientGraph, error) {
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("graph: split by owner: %w", err)
	}
	n := d.N()
	if len(owner) != n {
		return nil, fmt.Errorf("graph: split by owner: %d owners for %d nodes", len(owner), n)
	}
	if clients < 1 {
		return nil, fmt.Errorf("graph: split by owner: %d clients, want at least 1", clients)
	}
	local := make([]int32, n) // global -> local id at its owner
	size := make([]int, clients)
	for v, c := range owner {
		if c < 0 || int(c) >= clients {
			return nil, fmt.Errorf("graph: split by owner: node %d owned by client %d outside [0,%d)", v, c, clients)
		}
		local[v] = int32(size[c])
		size[c]++
	}
	out := make([]*ClientGraph, clients)
	for c := range out {
		out[c] = &ClientGraph{
			Client: c,
			Global: make([]int32, 0, size[c]),
			Data: &Dataset{
				Name:     fmt.Sprintf("%s/client-%d", d.Name, c),
				Adj:      &CSR{Rows: size[c], Cols: size[c], RowPtr: make([]int, 1, size[c]+1)},
				Features: &CSR{Rows: size[c], Cols: d.NumFeatures(), RowPtr: make([]int, 1, size[c]+1), Val: []float32{}},
				Labels:   make([]int32, 0, size[c]),
				Classes:  d.Classes,
				Split:    make([]Split, 0, size[c]),
				Metric:   d.Metric,
			},
		}
	}
	for v := 0; v < n; v++ {
		c := owner[v]
		cg := out[c]
		cg.Global = append(cg.Global, int32(v))
		adj := cg.Data.Adj
		nbrs, _ := d.Adj.Row(v)
		for _, u := range nbrs {
			if owner[u] == c {
				adj.ColIdx = append(adj.ColIdx, local[u])
			} else {
				cg.Cross = append(cg.Cross, CrossEdge{Local: local[v], Remote: u, RemoteOwner: owner[u]})
			}
		}
		adj.RowPtr = append(adj.RowPtr, len(adj.ColIdx))

		f := cg.Data.Features
		cols, vals := d.Features.Row(v)
		f.ColIdx = append(f.ColIdx, cols...)
		if vals != nil {
			f.Val = append(f.Val, vals...)
		} else {
			for range cols {
				f.Val = append(f.Val, 1)
			}
		}
		f.RowPtr = append(f.RowPtr, len(f.ColIdx))

		cg.Data.Labels = append(cg.Data.Labels, d.Labels[v])
		cg.Data.Split = append(cg.Data.Split, d.Split[v])
	}
	return out, nil
}

// Mask reports, per node, whether it belongs to split s: the training,
// validation or test mask of a (client) dataset.
func (d *Dataset) Mask(s Split) []bool {
	m := make([]bool, len(d.Split))
	for i, x := range d.Split {
		m[i] = x == s
	}
	return m
}

// Nodes lists, in ascending order, the nodes in split s.
func (d *Dataset) Nodes(s Split) []int32 {
	var ids []int32
	for i, x := range d.Split {
		if x == s {
			ids = append(ids, int32(i))
		}
	}
	return ids
}

// RandomSplit assigns round(trainFrac·n) random nodes to training,
// round(valFrac·n) to validation and the rest to test, for datasets that ship
// without a split. Fractions are clamped to [0,1] and validation is cut so
// that the two never exceed n.
func RandomSplit(n int, trainFrac, valFrac float64, rng *rand.Rand) []Split {
	out := make([]Split, max(n, 0))
	perm := rng.Perm(len(out))
	nTrain, nVal := splitSizes(len(out), trainFrac, valFrac)
	for k, v := range perm {
		out[v] = splitAt(k, nTrain, nVal)
	}
	return out
}

// StratifiedSplit is RandomSplit done within each class, so that every class
// keeps its share in train, val and test even for small fractions.
// Unlabelled nodes (label < 0) get SplitNone.
func StratifiedSplit(labels []int32, trainFrac, valFrac float64, rng *rand.Rand) []Split {
	out := make([]Split, len(labels))
	var byClass [][]int32
	for v, y := range labels {
		if y < 0 {
			continue
		}
		for int(y) >= len(byClass) {
			byClass = append(byClass, nil)
		}
		byClass[y] = append(byClass[y], int32(v))
	}
	for _, members := range byClass {
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		nTrain, nVal := splitSizes(len(members), trainFrac, valFrac)
		for k, v := range members {
			out[v] = splitAt(k, nTrain, nVal)
		}
	}
	return out
}

func splitSizes(n int, trainFrac, valFrac float64) (int, int) {
	clamp := func(f float64) float64 {
		if math.IsNaN(f) || f < 0 {
			return 0
		}
		return min(f, 1)
	}
	nTrain := int(math.Round(clamp(trainFrac) * float64(n)))
	nVal := min(int(math.Round(clamp(valFrac)*float64(n))), n-nTrain)
	return nTrain, nVal
}

func splitAt(k, nTrain, nVal int) Split {
	switch {
	case k < nTrain:
		return SplitTrain
	case k < nTrain+nVal:
		return SplitVal
	}
	return SplitTest
}
