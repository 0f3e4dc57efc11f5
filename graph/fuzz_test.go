package graph

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// Fuzz targets for every TSV parser and for LoadTSV as a whole. Besides "no
// panic", each checks the promise its parser makes on success. Run one with
//
//	go test ./graph/ -run XXX -fuzz FuzzParseFeatureLine -fuzztime 20s

func FuzzParseEdgeLine(f *testing.F) {
	for _, s := range []string{"0\t1", "7\t3", "1\t1", "1 2", "-1\t2", "0\t1\t2", "99999999999\t0", "+3\t04", ""} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, line string, n int) {
		e, err := parseEdgeLine(line, n)
		if err != nil {
			return
		}
		if e.U < 0 || int(e.U) >= n || e.V < 0 || int(e.V) >= n || e.U == e.V {
			t.Fatalf("%q (n=%d) gave edge %v", line, n, e)
		}
		again, err := parseEdgeLine(strconv.Itoa(int(e.U))+"\t"+strconv.Itoa(int(e.V)), n)
		if err != nil || again != e {
			t.Fatalf("canonical form of %v reparsed as %v, %v", e, again, err)
		}
	})
}

func FuzzParseFeatureLine(f *testing.F) {
	for _, s := range []string{"0\t0:1 3:1", "2\t4:3 1:1.25 2:-2", "5\t", "5", "1\t0:NaN", "1\t0:1e39", "1\t3:1 3:2",
		"1\t0:1\t1:1", "1\tx:1", "1\t2=1", "1\t  0:1   2:0x1p-3  ", "1\t0:-0 1:1e-45"} {
		f.Add(s, 8, 5)
	}
	f.Fuzz(func(t *testing.T, line string, n, nf int) {
		// A non-empty prefix in the buffers must survive every outcome.
		cols, vals := []int32{9}, []float32{9}
		node, cols, vals, err := parseFeatureLine(line, n, nf, cols, vals)
		if len(cols) != len(vals) || len(cols) < 1 || cols[0] != 9 || vals[0] != 9 {
			t.Fatalf("%q: buffers corrupted: %v %v", line, cols, vals)
		}
		if err != nil {
			if len(cols) != 1 {
				t.Fatalf("%q: error %v left %d entries appended", line, err, len(cols)-1)
			}
			return
		}
		if node < 0 || int(node) >= n {
			t.Fatalf("%q: node %d outside [0,%d)", line, node, n)
		}
		row := cols[1:]
		for k, c := range row {
			if c < 0 || int(c) >= nf || (k > 0 && row[k-1] >= c) {
				t.Fatalf("%q: columns %v not strictly increasing in [0,%d)", line, row, nf)
			}
		}
		for _, v := range vals[1:] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%q: non-finite value %v", line, v)
			}
		}
	})
}

func FuzzParseLabelLine(f *testing.F) {
	for _, s := range []string{"0\t0", "7\t-1", "3\t3", "3\t-2", "a\t1", "1\t1\t1", "1\t"} {
		f.Add(s, 8, 3)
	}
	f.Fuzz(func(t *testing.T, line string, n, classes int) {
		node, y, err := parseLabelLine(line, n, classes)
		if err != nil {
			return
		}
		if node < 0 || int(node) >= n || y < -1 || int(y) >= classes {
			t.Fatalf("%q (n=%d classes=%d) gave node %d class %d", line, n, classes, node, y)
		}
	})
}

func FuzzParseSplitLine(f *testing.F) {
	for _, s := range []string{"0\ttrain", "1\tval", "2\ttest", "3\tnone", "3\tTrain", "x\ttest", "1\ttest\t"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, line string, n int) {
		node, s, err := parseSplitLine(line, n)
		if err != nil {
			return
		}
		if node < 0 || int(node) >= n || s < SplitTrain || s > SplitTest {
			t.Fatalf("%q (n=%d) gave node %d split %v", line, n, node, s)
		}
		if again, s2, err := parseSplitLine(strconv.Itoa(int(node))+"\t"+s.String(), n); err != nil || again != node || s2 != s {
			t.Fatalf("canonical form of %q did not reparse", line)
		}
	})
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"nodes": 8, "features": 5, "classes": 3}`))
	f.Add([]byte(`{"nodes": -1, "features": 5, "classes": 3}`))
	f.Add([]byte(`{"nodes": 1e10, "features": 5, "classes": 3, "train": null}`))
	f.Add([]byte(`{"name": 3}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseMeta(raw)
		if err != nil {
			return
		}
		for _, v := range []*int{m.Nodes, m.Features, m.Classes} {
			if v == nil || *v < 0 || *v > math.MaxInt32 {
				t.Fatalf("%q accepted with nodes/features/classes %v %v %v", raw, m.Nodes, m.Features, m.Classes)
			}
		}
	})
}

// FuzzLoadTSV writes the five files to a temp dir and loads them. Whatever
// loads must be a valid dataset that survives WriteTSV and LoadTSV unchanged.
func FuzzLoadTSV(f *testing.F) {
	read := func(dir, name string) string {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		return string(raw)
	}
	names := []string{metaFile, edgesFile, featuresFile, labelsFile, splitFile}
	tiny := make([]string, len(names))
	for i, name := range names {
		tiny[i] = read(tinyDir, name)
	}
	f.Add(tiny[0], tiny[1], tiny[2], tiny[3], tiny[4])
	f.Add(`{"nodes":3,"features":2,"classes":2}`, "0\t1\n", "2\t1:0.5\n", "0\t1\n", "")
	f.Add(`{"nodes":0,"features":0,"classes":0}`, "", "", "", "")
	if cases, err := os.ReadDir("testdata/tsv/malformed"); err == nil {
		for _, c := range cases {
			files := slices.Clone(tiny)
			for i, name := range names {
				if raw, err := os.ReadFile(filepath.Join("testdata/tsv/malformed", c.Name(), name)); err == nil {
					files[i] = string(raw)
				}
			}
			f.Add(files[0], files[1], files[2], files[3], files[4])
		}
	}
	f.Fuzz(func(t *testing.T, meta, edges, features, labels, split string) {
		// Node counts are allocated up front; a huge count is a legitimate
		// (memory-hungry) dataset, not a parser bug, so keep it small here.
		if m, err := parseMeta([]byte(meta)); err == nil && *m.Nodes > 1<<12 {
			t.Skip("node count too large for fuzzing")
		}
		dir := t.TempDir()
		for i, content := range []string{meta, edges, features, labels, split} {
			if err := os.WriteFile(filepath.Join(dir, names[i]), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := LoadTSV(dir)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("loaded an invalid dataset: %v", err)
		}
		out := t.TempDir()
		if err := WriteTSV(out, d); err != nil {
			t.Fatalf("cannot write what was loaded: %v", err)
		}
		back, err := LoadTSV(out)
		if err != nil {
			t.Fatalf("cannot reload what was written: %v", err)
		}
		if !reflect.DeepEqual(back, d) {
			t.Fatalf("write/load round trip changed the dataset")
		}
	})
}
