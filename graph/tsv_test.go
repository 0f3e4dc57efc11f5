package graph

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const tinyDir = "testdata/tsv/tiny"

// sharedDataset locates ../../shared/datasets/<name> or skips the test.
func sharedDataset(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "datasets", name)
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err != nil {
		t.Skipf("dataset %s not available at %s (it ships only with the shared folder): %v", name, dir, err)
	}
	return dir
}

// copyDir copies the regular files of src into a fresh temp dir.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestLoadTSVTiny(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny" || d.N() != 8 || d.Adj.NNZ() != 18 || d.NumFeatures() != 5 || d.Classes != 3 {
		t.Fatalf("got %s: %d nodes, %d entries, %d features, %d classes", d.Name, d.N(), d.Adj.NNZ(), d.NumFeatures(), d.Classes)
	}
	if got, want := d.Labels, []int32{0, 0, 1, 1, 2, 2, 0, -1}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	if got, want := d.Split, []Split{SplitTrain, SplitVal, SplitTrain, SplitVal, SplitTrain, SplitTest, SplitTest, SplitNone}; !reflect.DeepEqual(got, want) {
		t.Errorf("split %v, want %v", got, want)
	}
	cols, _ := d.Adj.Row(4)
	if want := []int32{3, 5, 7}; !reflect.DeepEqual(cols, want) {
		t.Errorf("neighbours of 4: %v, want %v", cols, want)
	}
	cols, vals := d.Features.Row(2)
	if !reflect.DeepEqual(cols, []int32{1, 2, 4}) || !reflect.DeepEqual(vals, []float32{1.25, -2, 3}) {
		t.Errorf("features of 2: %v %v", cols, vals)
	}
	if d.Features.Degree(5) != 0 {
		t.Errorf("node 5 should have an empty feature row")
	}
}

// TestLoadTSVMalformed overlays each testdata/tsv/malformed/<case> on the
// tiny fixture and checks that the error names the file and line.
func TestLoadTSVMalformed(t *testing.T) {
	cases, err := os.ReadDir("testdata/tsv/malformed")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := copyDir(t, tinyDir)
			overlay := filepath.Join("testdata/tsv/malformed", c.Name())
			files, err := os.ReadDir(overlay)
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, f := range files {
				raw, err := os.ReadFile(filepath.Join(overlay, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if f.Name() == "want_error" {
					want = string(raw)
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, f.Name()), raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want == "" {
				t.Fatal("case has no want_error file")
			}
			_, err = LoadTSV(dir)
			if err == nil {
				t.Fatalf("LoadTSV succeeded, want error containing %q", want)
			}
			if !strings.HasPrefix(err.Error(), "graph: load tsv: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("error %q\nwant it to start with %q and contain %q", err, "graph: load tsv: ", want)
			}
		})
	}
}

func TestLoadTSVFiles(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(dir string) error
		wantErr string // empty: must load
	}{
		{"missing edges", func(dir string) error { return os.Remove(filepath.Join(dir, edgesFile)) }, "open "},
		{"missing meta", func(dir string) error { return os.Remove(filepath.Join(dir, metaFile)) }, "meta.json"},
		{"missing split is allowed", func(dir string) error {
			if err := os.Remove(filepath.Join(dir, splitFile)); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, metaFile), []byte(`{"nodes":8,"features":5,"classes":3}`), 0o644)
		}, ""},
		{"crlf line endings", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, edgesFile), []byte("0\t1\r\n0\t2\r\n1\t2\r\n2\t3\r\n3\t4\r\n4\t5\r\n4\t7\r\n5\t6\r\n6\t7\r\n"), 0o644)
		}, ""},
		{"unsorted feature row", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, featuresFile), []byte("2\t4:3 1:1.25 2:-2\n0\t3:1 0:1\n"), 0o644)
		}, ""},
		{"line too long", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, featuresFile), []byte("0\t0:1\n1\t"+strings.Repeat(" ", maxLineBytes+1)+"\n"), 0o644)
		}, "features.tsv:2: bufio.Scanner: token too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, tinyDir)
			if err := tc.edit(dir); err != nil {
				t.Fatal(err)
			}
			d, err := LoadTSV(dir)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestWriteTSVFixture: the fixture is in canonical form, so writing what was
// loaded reproduces every file byte for byte.
func TestWriteTSVFixture(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteTSV(out, d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{metaFile, edgesFile, featuresFile, labelsFile, splitFile} {
		want, err := os.ReadFile(filepath.Join(tinyDir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs:\n got %q\nwant %q", name, got, want)
		}
	}
}

func TestWriteTSVRoundTrip(t *testing.T) {
	cfg := DefaultCSBM()
	cfg.Nodes = 300
	tests := []struct {
		name string
		make func() (*Dataset, error)
	}{
		{"tiny", func() (*Dataset, error) { return LoadTSV(tinyDir) }},
		{"csbm", func() (*Dataset, error) { return GenerateCSBM(cfg, rand.New(rand.NewPCG(1, 2))) }},
		{"csbm row-normalized", func() (*Dataset, error) {
			d, err := GenerateCSBM(cfg, rand.New(rand.NewPCG(3, 4)))
			if err == nil {
				d.Features = RowNormalize(d.Features)
			}
			return d, err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := WriteTSV(dir, d); err != nil {
				t.Fatal(err)
			}
			back, err := LoadTSV(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, d) {
				t.Errorf("round trip changed the dataset")
			}
		})
	}
}

func TestWriteTSVRejects(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	asym, err := FromEdges(8, []Edge{{0, 1}, {1, 2}, {2, 1}}, false)
	if err != nil {
		t.Fatal(err)
	}
	bad := *d
	bad.Adj = asym
	if err := WriteTSV(t.TempDir(), &bad); err == nil || !strings.Contains(err.Error(), "not symmetric: 0->1") {
		t.Errorf("asymmetric adjacency: error %v", err)
	}
	bad = *d
	bad.Labels = bad.Labels[:3]
	if err := WriteTSV(t.TempDir(), &bad); err == nil || !strings.Contains(err.Error(), "graph: write tsv: ") {
		t.Errorf("short labels: error %v", err)
	}
}

func TestLoadTSVCora(t *testing.T) {
	dir := sharedDataset(t, "cora")
	d, err := LoadTSV(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "cora" || d.N() != 2708 || d.Adj.NNZ() != 10556 || d.NumFeatures() != 1433 || d.Classes != 7 {
		t.Fatalf("got %s: %d nodes, %d entries, %d features, %d classes", d.Name, d.N(), d.Adj.NNZ(), d.NumFeatures(), d.Classes)
	}
	if tr, va, te := d.Count(SplitTrain), d.Count(SplitVal), d.Count(SplitTest); tr != 140 || va != 500 || te != 1000 {
		t.Errorf("split %d/%d/%d, want 140/500/1000", tr, va, te)
	}
	if err := checkSymmetric(d.Adj); err != nil {
		t.Error(err)
	}
	// Cora's well-known edge homophily is 0.81.
	if h := EdgeHomophily(d); h < 0.80 || h > 0.82 {
		t.Errorf("edge homophily %.3f, want about 0.81", h)
	}
	// The shared files are canonical, so writing them back is an identity
	// (meta.json aside, which carries provenance fields we do not keep).
	out := t.TempDir()
	if err := WriteTSV(out, d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{edgesFile, featuresFile, labelsFile, splitFile} {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		got, _ := os.ReadFile(filepath.Join(out, name))
		if string(got) != string(want) {
			t.Errorf("%s: written copy differs from the shared file", name)
		}
	}
}

func BenchmarkLoadTSVCora(b *testing.B) {
	dir := sharedDataset(b, "cora")
	for b.Loop() {
		if _, err := LoadTSV(dir); err != nil {
			b.Fatal(err)
		}
	}
}
