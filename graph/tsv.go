package graph

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The TSV dataset layout (see examples/data/README.md): one directory with
// meta.json, edges.tsv, features.tsv, labels.tsv and split.tsv. It is plain
// text so that a dataset converted by any tool can be diffed and audited.
const (
	metaFile     = "meta.json"
	edgesFile    = "edges.tsv"
	featuresFile = "features.tsv"
	labelsFile   = "labels.tsv"
	splitFile    = "split.tsv"
)

// maxLineBytes bounds one TSV line. Feature rows of wide dense datasets are
// long, so the bufio.Scanner default of 64 KiB is too small.
const maxLineBytes = 16 << 20

// tsvMeta is meta.json. Nodes, Features and Classes are required; the counts
// behind pointers are checked only when present so that hand-made datasets
// need not repeat them.
type tsvMeta struct {
	Name            string `json:"name"`
	Nodes           *int   `json:"nodes"`
	UndirectedEdges *int   `json:"undirected_edges,omitempty"`
	Features        *int   `json:"features"`
	Classes         *int   `json:"classes"`
	Train           *int   `json:"train,omitempty"`
	Val             *int   `json:"val,omitempty"`
	Test            *int   `json:"test,omitempty"`
	UnlabeledNodes  *int   `json:"unlabeled_nodes,omitempty"`
	Metric          string `json:"metric,omitempty"`
}

// LoadTSV reads a dataset in the TSV layout from dir. The adjacency is made
// symmetric; every count meta.json states is checked against the files.
// split.tsv is optional (absent: every node is SplitNone). Malformed input is
// an error naming the file and line.
func LoadTSV(dir string) (*Dataset, error) {
	raw, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, fmt.Errorf("graph: load tsv: %w", err)
	}
	meta, err := parseMeta(raw)
	if err != nil {
		return nil, fmt.Errorf("graph: load tsv: %s: %w", metaFile, err)
	}
	n, nf, classes := *meta.Nodes, *meta.Features, *meta.Classes
	name := meta.Name
	if name == "" {
		name = filepath.Base(dir)
	}
	d := &Dataset{Name: name, Classes: classes, Metric: meta.Metric}

	var edges []Edge
	err = scanTSV(dir, edgesFile, func(line string) error {
		e, err := parseEdgeLine(line, n)
		edges = append(edges, e)
		return err
	})
	if err != nil {
		return nil, err
	}
	if d.Adj, err = FromEdges(n, edges, true); err != nil {
		return nil, fmt.Errorf("graph: load tsv: %s: %w", edgesFile, err)
	}
	// Duplicates (in either orientation) collapse in FromEdges; a count that
	// differs afterwards means the file is not the edge list it claims to be.
	if d.Adj.NNZ() != 2*len(edges) {
		return nil, duplicateEdgeError(dir, n)
	}
	if meta.UndirectedEdges != nil && *meta.UndirectedEdges != len(edges) {
		return nil, fmt.Errorf("graph: load tsv: %s: %d edges, %s says %d", edgesFile, len(edges), metaFile, *meta.UndirectedEdges)
	}

	if d.Features, err = loadFeatures(dir, n, nf); err != nil {
		return nil, err
	}

	d.Labels = make([]int32, n)
	for i := range d.Labels {
		d.Labels[i] = -1
	}
	seen := make([]bool, n)
	err = scanTSV(dir, labelsFile, func(line string) error {
		node, class, err := parseLabelLine(line, n, classes)
		if err != nil {
			return err
		}
		if seen[node] {
			return fmt.Errorf("node %d labelled twice", node)
		}
		seen[node] = true
		d.Labels[node] = class
		return nil
	})
	if err != nil {
		return nil, err
	}

	d.Split = make([]Split, n)
	clear(seen)
	err = scanTSV(dir, splitFile, func(line string) error {
		node, s, err := parseSplitLine(line, n)
		if err != nil {
			return err
		}
		if seen[node] {
			return fmt.Errorf("node %d listed twice", node)
		}
		seen[node] = true
		d.Split[node] = s
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := checkMetaCounts(d, meta); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("graph: load tsv: %w", err)
	}
	return d, nil
}

// duplicateEdgeError rescans edges.tsv to name the line of the first
// duplicate. Only the error path pays for the set.
func duplicateEdgeError(dir string, n int) error {
	seen := make(map[Edge]bool)
	err := scanTSV(dir, edgesFile, func(line string) error {
		e, err := parseEdgeLine(line, n)
		if err != nil {
			return err
		}
		if e.U > e.V {
			e.U, e.V = e.V, e.U
		}
		if seen[e] {
			return fmt.Errorf("duplicate edge %d-%d", e.U, e.V)
		}
		seen[e] = true
		return nil
	})
	if err == nil { // the file changed between the two reads
		err = fmt.Errorf("graph: load tsv: %s: duplicate edges", edgesFile)
	}
	return err
}

// loadFeatures reads features.tsv into an n×nf CSR with Val set. Nodes not
// listed get an empty row.
func loadFeatures(dir string, n, nf int) (*CSR, error) {
	// Rows may come in any node order; each is parsed straight into the
	// shared cols/vals buffers and remembered by its span.
	start := make([]int, n)
	end := make([]int, n)
	listed := make([]bool, n)
	var cols []int32
	var vals []float32
	err := scanTSV(dir, featuresFile, func(line string) error {
		lo := len(cols)
		node, c, v, err := parseFeatureLine(line, n, nf, cols, vals)
		cols, vals = c, v
		if err != nil {
			return err
		}
		if listed[node] {
			return fmt.Errorf("node %d has two feature rows", node)
		}
		listed[node] = true
		start[node], end[node] = lo, len(cols)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &CSR{Rows: n, Cols: nf, RowPtr: make([]int, n+1), ColIdx: make([]int32, 0, len(cols)), Val: make([]float32, 0, len(vals))}
	for i := 0; i < n; i++ {
		m.ColIdx = append(m.ColIdx, cols[start[i]:end[i]]...)
		m.Val = append(m.Val, vals[start[i]:end[i]]...)
		m.RowPtr[i+1] = len(m.ColIdx)
	}
	return m, nil
}

func checkMetaCounts(d *Dataset, meta tsvMeta) error {
	check := func(what string, want *int, got int) error {
		if want != nil && *want != got {
			return fmt.Errorf("graph: load tsv: %d %s nodes, %s says %d", got, what, metaFile, *want)
		}
		return nil
	}
	unlabelled := 0
	for _, y := range d.Labels {
		if y < 0 {
			unlabelled++
		}
	}
	return errors.Join(
		check("train", meta.Train, d.Count(SplitTrain)),
		check("val", meta.Val, d.Count(SplitVal)),
		check("test", meta.Test, d.Count(SplitTest)),
		check("unlabelled", meta.UnlabeledNodes, unlabelled),
	)
}

// scanTSV calls fn for every non-blank line of dir/name and prefixes any
// error with the operation, file name and 1-based line number.
func scanTSV(dir, name string, fn func(line string) error) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("graph: load tsv: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("graph: load tsv: %s:%d: %w", name, lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("graph: load tsv: %s:%d: %w", name, lineNo+1, err)
	}
	return nil
}

// parseMeta decodes meta.json and checks the required counts.
func parseMeta(raw []byte) (tsvMeta, error) {
	var m tsvMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, err
	}
	for _, f := range []struct {
		name string
		v    *int
		max  int
	}{{"nodes", m.Nodes, math.MaxInt32}, {"features", m.Features, math.MaxInt32}, {"classes", m.Classes, math.MaxInt32}} {
		if f.v == nil {
			return m, fmt.Errorf("missing %q", f.name)
		}
		if *f.v < 0 || *f.v > f.max {
			return m, fmt.Errorf("%q = %d outside [0,%d]", f.name, *f.v, f.max)
		}
	}
	switch m.Metric {
	case "", MetricAccuracy:
	case MetricROCAUC:
		if *m.Classes != 2 {
			return m, fmt.Errorf("metric %q needs 2 classes, %q = %d", m.Metric, "classes", *m.Classes)
		}
	default:
		return m, fmt.Errorf("unknown metric %q (want %s or %s)", m.Metric, MetricAccuracy, MetricROCAUC)
	}
	return m, nil
}

// parseNode parses a node id in [0,n).
func parseNode(s string, n int) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad node id %q", s)
	}
	if v < 0 || v >= int64(n) {
		return 0, fmt.Errorf("node %d outside [0,%d)", v, n)
	}
	return int32(v), nil
}

// fields2 splits "a<TAB>b" into exactly two fields.
func fields2(line string) (string, string, error) {
	a, b, ok := strings.Cut(line, "\t")
	if !ok || strings.Contains(b, "\t") {
		return "", "", fmt.Errorf("want 2 tab-separated fields, got %d", strings.Count(line, "\t")+1)
	}
	return a, b, nil
}

// parseEdgeLine parses "u<TAB>v" with both ids in [0,n). Self loops are
// rejected because Dataset promises none and FromEdges would drop them
// silently.
func parseEdgeLine(line string, n int) (Edge, error) {
	a, b, err := fields2(line)
	if err != nil {
		return Edge{}, err
	}
	u, err := parseNode(a, n)
	if err != nil {
		return Edge{}, err
	}
	v, err := parseNode(b, n)
	if err != nil {
		return Edge{}, err
	}
	if u == v {
		return Edge{}, fmt.Errorf("self loop at node %d", u)
	}
	return Edge{u, v}, nil
}

// parseFeatureLine parses "node<TAB>col:val col:val …" (the tab and the list
// may be absent for an all-zero row), appending the row, sorted by column, to
// cols and vals. Columns must lie in [0,nf) and be unique; values must be
// finite.
func parseFeatureLine(line string, n, nf int, cols []int32, vals []float32) (int32, []int32, []float32, error) {
	head, rest, _ := strings.Cut(line, "\t")
	if strings.Contains(rest, "\t") {
		return 0, cols, vals, fmt.Errorf("want 2 tab-separated fields, got %d", strings.Count(line, "\t")+1)
	}
	node, err := parseNode(head, n)
	if err != nil {
		return 0, cols, vals, err
	}
	lo := len(cols)
	sorted := true
	for _, tok := range strings.Fields(rest) {
		cs, vs, ok := strings.Cut(tok, ":")
		if !ok {
			return 0, cols[:lo], vals[:lo], fmt.Errorf("bad entry %q, want col:value", tok)
		}
		c, err := strconv.ParseInt(cs, 10, 32)
		if err != nil {
			return 0, cols[:lo], vals[:lo], fmt.Errorf("bad column %q", cs)
		}
		if c < 0 || c >= int64(nf) {
			return 0, cols[:lo], vals[:lo], fmt.Errorf("column %d outside [0,%d)", c, nf)
		}
		v, err := strconv.ParseFloat(vs, 32)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, cols[:lo], vals[:lo], fmt.Errorf("bad value %q in column %d", vs, c)
		}
		if len(cols) > lo && int32(c) <= cols[len(cols)-1] {
			sorted = false
		}
		cols = append(cols, int32(c))
		vals = append(vals, float32(v))
	}
	if !sorted {
		sort.Sort(rowSorter{cols[lo:], vals[lo:]})
	}
	for k := lo + 1; k < len(cols); k++ {
		if cols[k] == cols[k-1] {
			return 0, cols[:lo], vals[:lo], fmt.Errorf("column %d given twice", cols[k])
		}
	}
	return node, cols, vals, nil
}

// rowSorter sorts one sparse row by column, keeping values paired.
type rowSorter struct {
	c []int32
	v []float32
}

func (r rowSorter) Len() int           { return len(r.c) }
func (r rowSorter) Less(i, j int) bool { return r.c[i] < r.c[j] }
func (r rowSorter) Swap(i, j int) {
	r.c[i], r.c[j] = r.c[j], r.c[i]
	r.v[i], r.v[j] = r.v[j], r.v[i]
}

// parseLabelLine parses "node<TAB>class" with class in [-1,classes).
func parseLabelLine(line string, n, classes int) (int32, int32, error) {
	a, b, err := fields2(line)
	if err != nil {
		return 0, 0, err
	}
	node, err := parseNode(a, n)
	if err != nil {
		return 0, 0, err
	}
	y, err := strconv.ParseInt(b, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("bad class %q", b)
	}
	if y < -1 || y >= int64(classes) {
		return 0, 0, fmt.Errorf("class %d outside [-1,%d)", y, classes)
	}
	return node, int32(y), nil
}

// parseSplitLine parses "node<TAB>train|val|test".
func parseSplitLine(line string, n int) (int32, Split, error) {
	a, b, err := fields2(line)
	if err != nil {
		return 0, SplitNone, err
	}
	node, err := parseNode(a, n)
	if err != nil {
		return 0, SplitNone, err
	}
	switch b {
	case "train":
		return node, SplitTrain, nil
	case "val":
		return node, SplitVal, nil
	case "test":
		return node, SplitTest, nil
	}
	return 0, SplitNone, fmt.Errorf("bad split %q, want train, val or test", b)
}

// WriteTSV writes d to dir (created if needed) in the layout LoadTSV reads:
// edges once each as u<v, every feature row (empty rows as a bare id), every
// label, and the split of every node that has one. Float32 values are
// written in their shortest exact form, so LoadTSV(WriteTSV(d)) == d.
func WriteTSV(dir string, d *Dataset) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("graph: write tsv: %w", err)
	}
	if err := checkSymmetric(d.Adj); err != nil {
		return fmt.Errorf("graph: write tsv: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("graph: write tsv: %w", err)
	}
	n := d.N()
	unlabelled := 0
	for _, y := range d.Labels {
		if y < 0 {
			unlabelled++
		}
	}
	ptr := func(v int) *int { return &v }
	meta := tsvMeta{
		Name: d.Name, Nodes: ptr(n), UndirectedEdges: ptr(d.Adj.NNZ() / 2),
		Features: ptr(d.NumFeatures()), Classes: ptr(d.Classes),
		Train: ptr(d.Count(SplitTrain)), Val: ptr(d.Count(SplitVal)), Test: ptr(d.Count(SplitTest)),
		UnlabeledNodes: ptr(unlabelled), Metric: d.Metric,
	}
	raw, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		return fmt.Errorf("graph: write tsv: %s: %w", metaFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, metaFile), append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("graph: write tsv: %w", err)
	}
	return errors.Join(
		writeTSV(dir, edgesFile, func(w *bufio.Writer) {
			for i := 0; i < n; i++ {
				cols, _ := d.Adj.Row(i)
				for _, c := range cols {
					if int(c) > i {
						fmt.Fprintf(w, "%d\t%d\n", i, c)
					}
				}
			}
		}),
		writeTSV(dir, featuresFile, func(w *bufio.Writer) {
			var buf []byte
			for i := 0; i < n; i++ {
				cols, vals := d.Features.Row(i)
				buf = strconv.AppendInt(buf[:0], int64(i), 10)
				buf = append(buf, '\t')
				for k, c := range cols {
					if k > 0 {
						buf = append(buf, ' ')
					}
					buf = strconv.AppendInt(buf, int64(c), 10)
					buf = append(buf, ':')
					v := float32(1)
					if vals != nil {
						v = vals[k]
					}
					buf = strconv.AppendFloat(buf, float64(v), 'g', -1, 32)
				}
				buf = append(buf, '\n')
				w.Write(buf)
			}
		}),
		writeTSV(dir, labelsFile, func(w *bufio.Writer) {
			for i, y := range d.Labels {
				fmt.Fprintf(w, "%d\t%d\n", i, y)
			}
		}),
		writeTSV(dir, splitFile, func(w *bufio.Writer) {
			for i, s := range d.Split {
				if s != SplitNone {
					fmt.Fprintf(w, "%d\t%s\n", i, s)
				}
			}
		}),
	)
}

// writeTSV creates dir/name and lets fill write it. bufio.Writer remembers
// its first error, so fill need not check each write; Flush reports it.
func writeTSV(dir, name string, fill func(w *bufio.Writer)) error {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("graph: write tsv: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	fill(w)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return fmt.Errorf("graph: write tsv: %s: %w", name, err)
	}
	return nil
}

// checkSymmetric reports the first stored entry (u,v) whose mirror (v,u) is
// missing: WriteTSV stores each undirected edge once and would otherwise
// lose one direction silently.
func checkSymmetric(m *CSR) error {
	for u := 0; u < m.Rows; u++ {
		cols, _ := m.Row(u)
		for _, v := range cols {
			back, _ := m.Row(int(v))
			k := sort.Search(len(back), func(k int) bool { return back[k] >= int32(u) })
			if k == len(back) || back[k] != int32(u) {
				return fmt.Errorf("adjacency not symmetric: %d->%d stored, %d->%d missing", u, v, v, u)
			}
		}
	}
	return nil
}
