package dataget

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"graphfed/graph"
)

// planetoidParts are the suffixes of a Planetoid dataset's files,
// ind.NAME.<part>, as Kipf & Welling's gcn/utils.py load_data reads them.
func planetoidParts() []string {
	return []string{"x", "y", "tx", "ty", "allx", "ally", "graph", "test.index"}
}

// convertPlanetoid builds the dataset Kipf & Welling's load_data builds
// from the Planetoid files, with their public split: node i < len(allx)
// has row i of allx and ally; the k-th id of test.index has row k of tx
// and ty; nodes in neither (CiteSeer's isolated test nodes, which load_data
// pads with zero rows) have no features, label -1 and no split. train is
// 0..len(y)-1, val the next 500, test the ids of test.index. A label row
// with no class set (CiteSeer has some) is label -1. The adjacency is the
// graph dict made undirected, without self loops or duplicates.
func convertPlanetoid(name string, read func(string) ([]byte, error)) (*graph.Dataset, error) {
	parts := map[string]any{}
	for _, p := range planetoidParts() {
		if p == "test.index" {
			continue
		}
		b, err := read("ind." + name + "." + p)
		if err != nil {
			return nil, err
		}
		v, err := Unpickle(b)
		if err != nil {
			return nil, fmt.Errorf("ind.%s.%s: %w", name, p, err)
		}
		parts[p] = v
	}
	idxRaw, err := read("ind." + name + ".test.index")
	if err != nil {
		return nil, err
	}
	testIdx, err := parseIndexFile(idxRaw)
	if err != nil {
		return nil, fmt.Errorf("ind.%s.test.index: %w", name, err)
	}
	mats := map[string]sparseRows{}
	for _, p := range []string{"x", "tx", "allx"} {
		if mats[p], err = pickledCSR(parts[p]); err != nil {
			return nil, fmt.Errorf("ind.%s.%s: %w", name, p, err)
		}
	}
	labels := map[string][][]int64{}
	for _, p := range []string{"y", "ty", "ally"} {
		if labels[p], err = oneHotRows(parts[p]); err != nil {
			return nil, fmt.Errorf("ind.%s.%s: %w", name, p, err)
		}
	}
	keys, lists, err := pickledAdjacency(parts["graph"])
	if err != nil {
		return nil, fmt.Errorf("ind.%s.graph: %w", name, err)
	}
	return assemblePlanetoid(name, mats, labels, testIdx, keys, lists)
}

func assemblePlanetoid(name string, mats map[string]sparseRows, labels map[string][][]int64,
	testIdx []int64, keys []int64, lists [][]int64) (*graph.Dataset, error) {
	allx, tx := mats["allx"], mats["tx"]
	ally, ty, y := labels["ally"], labels["ty"], labels["y"]
	switch {
	case allx.Cols != tx.Cols || mats["x"].Cols != allx.Cols:
		return nil, fmt.Errorf("planetoid %s: feature widths %d, %d, %d differ", name, mats["x"].Cols, allx.Cols, tx.Cols)
	case len(ally) != allx.Rows || len(ty) != tx.Rows || len(y) != mats["x"].Rows:
		return nil, fmt.Errorf("planetoid %s: label rows do not match feature rows", name)
	case len(testIdx) != tx.Rows:
		return nil, fmt.Errorf("planetoid %s: %d test ids for %d tx rows", name, len(testIdx), tx.Rows)
	case len(y)+500 > allx.Rows:
		return nil, fmt.Errorf("planetoid %s: %d rows of allx leave no 500 validation nodes after %d training ones", name, allx.Rows, len(y))
	}
	classes := len(ally[0])
	for _, rows := range [][][]int64{y, ty} {
		for _, r := range rows {
			if len(r) != classes {
				return nil, fmt.Errorf("planetoid %s: label rows of %d and %d classes", name, len(r), classes)
			}
		}
	}
	n := allx.Rows
	for _, id := range testIdx {
		if id < int64(allx.Rows) || id >= int64(allx.Rows)+maxPlanetoidGap {
			return nil, fmt.Errorf("planetoid %s: test id %d outside [%d,%d)", name, id, allx.Rows, int64(allx.Rows)+maxPlanetoidGap)
		}
		n = max(n, int(id)+1)
	}
	for _, k := range keys {
		if k < 0 || k >= int64(n) {
			return nil, fmt.Errorf("planetoid %s: graph node %d outside [0,%d)", name, k, n)
		}
	}
	// row[i] locates node i's features and label: (allx, i), (tx, k) or none.
	type loc struct {
		m   *sparseRows
		lab [][]int64
		row int
	}
	at := make([]loc, n)
	for i := range allx.Rows {
		at[i] = loc{&allx, ally, i}
	}
	seen := make([]bool, n)
	for k, id := range testIdx {
		if seen[id] {
			return nil, fmt.Errorf("planetoid %s: test id %d listed twice", name, id)
		}
		seen[id] = true
		at[id] = loc{&tx, ty, k}
	}
	d := &graph.Dataset{Name: name, Classes: classes, Labels: make([]int32, n), Split: make([]graph.Split, n), Metric: graph.MetricAccuracy}
	feat := &graph.CSR{Rows: n, Cols: allx.Cols, RowPtr: make([]int, n+1)}
	for i, l := range at {
		d.Labels[i] = -1
		if l.m != nil {
			lo, hi := l.m.Indptr[l.row], l.m.Indptr[l.row+1]
			cols, vals := sortedRow(l.m.Indices[lo:hi], l.m.Data[lo:hi])
			feat.ColIdx = append(feat.ColIdx, cols...)
			feat.Val = append(feat.Val, vals...)
			d.Labels[i] = classOf(l.lab[l.row])
		}
		feat.RowPtr[i+1] = len(feat.ColIdx)
	}
	d.Features = feat
	for i := range len(y) {
		d.Split[i] = graph.SplitTrain
	}
	for i := len(y); i < len(y)+500; i++ {
		d.Split[i] = graph.SplitVal
	}
	for _, id := range testIdx {
		d.Split[id] = graph.SplitTest
	}
	var edges []graph.Edge
	for i, u := range keys {
		for _, v := range lists[i] {
			if v < 0 || v >= int64(n) {
				return nil, fmt.Errorf("planetoid %s: neighbour %d of node %d outside [0,%d)", name, v, u, n)
			}
			edges = append(edges, graph.Edge{U: int32(u), V: int32(v)})
		}
	}
	adj, err := graph.FromEdges(n, edges, true)
	if err != nil {
		return nil, fmt.Errorf("planetoid %s: %w", name, err)
	}
	d.Adj = adj
	return d, d.Validate()
}

// maxPlanetoidGap bounds how far test ids may reach past allx, so that a
// corrupt index cannot make the converter allocate for billions of nodes.
const maxPlanetoidGap = 1 << 20

// sortedRow is one sparse row sorted by column, zeros dropped.
func sortedRow(idx []int64, val []float32) ([]int32, []float32) {
	type e struct {
		c int32
		v float32
	}
	es := make([]e, 0, len(idx))
	for k, c := range idx {
		if val[k] != 0 {
			es = append(es, e{int32(c), val[k]})
		}
	}
	slices.SortFunc(es, func(a, b e) int { return int(a.c) - int(b.c) })
	cols := make([]int32, 0, len(es))
	vals := make([]float32, 0, len(es))
	for k, x := range es {
		if k > 0 && x.c == es[k-1].c {
			vals[len(vals)-1] += x.v // scipy sums duplicate entries
			continue
		}
		cols = append(cols, x.c)
		vals = append(vals, x.v)
	}
	return cols, vals
}

// oneHotRows reads a pickled 2-d label array as rows of integers.
func oneHotRows(v any) ([][]int64, error) {
	a, err := pickledArray(v)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 2 || a.Shape[1] == 0 {
		return nil, fmt.Errorf("labels of shape %v, want rows of classes", a.Shape)
	}
	flat, err := a.Int64s()
	if err != nil {
		return nil, err
	}
	rows := make([][]int64, a.Shape[0])
	for i := range rows {
		rows[i] = flat[i*a.Shape[1] : (i+1)*a.Shape[1]]
	}
	return rows, nil
}

// classOf is the class of a one-hot row, -1 when no class is set. Like
// numpy's argmax, the first maximum wins.
func classOf(row []int64) int32 {
	best := -1
	for c, v := range row {
		if v > 0 && (best < 0 || v > row[best]) {
			best = c
		}
	}
	return int32(best)
}

// parseIndexFile reads test.index: one integer per line.
func parseIndexFile(b []byte) ([]int64, error) {
	var out []int64
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not an integer", i+1, line)
		}
		out = append(out, v)
	}
	return out, nil
}
