package dataget

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// Every catalog entry pins a commit and, per file, a size and a SHA-256.
func TestCatalogPins(t *testing.T) {
	hex40, hex64 := regexp.MustCompile(`^[0-9a-f]{40}$`), regexp.MustCompile(`^[0-9a-f]{64}$`)
	names := map[string]bool{}
	for _, s := range Catalog() {
		if names[s.Name] || !regexp.MustCompile(`^[a-z0-9-]+$`).MatchString(s.Name) {
			t.Errorf("name %q repeated or not [a-z0-9-]", s.Name)
		}
		names[s.Name] = true
		if !hex40.MatchString(s.Commit) || strings.Count(s.Repo, "/") != 1 || s.convert == nil || s.Licence == "" || s.Cite == "" {
			t.Errorf("%s: incomplete spec %+v", s.Name, s)
		}
		if s.Layout != LayoutTSV && s.Layout != LayoutLightGCN {
			t.Errorf("%s: layout %q", s.Name, s.Layout)
		}
		bases := map[string]bool{}
		for _, f := range s.Files {
			if !hex64.MatchString(f.SHA256) || f.Size <= 0 || bases[f.Base()] {
				t.Errorf("%s: file %+v", s.Name, f)
			}
			bases[f.Base()] = true
		}
	}
	if _, err := Lookup("pubmed"); err == nil || !strings.Contains(err.Error(), "cora, citeseer") {
		t.Errorf("Lookup(pubmed) = %v", err)
	}
}

// The pinned fixtures hash to the catalog's values (the fixtures are the
// public files, not look-alikes).
func TestFixturesAreThePinnedFiles(t *testing.T) {
	files := fixtures(t)
	for _, name := range []string{"cora", "texas"} {
		s, _ := Lookup(name)
		for _, f := range s.Files {
			sum := sha256.Sum256(files[f.Base()])
			if hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(files[f.Base()])) != f.Size {
				t.Errorf("testdata %s is not the pinned %s", f.Base(), f.Path)
			}
		}
	}
}

// lastfm's converter, on small files with their own pins: 1-based ids
// shifted, counts dropped, one LightGCN line per user.
func TestGetInteractionLists(t *testing.T) {
	from := t.TempDir()
	train := "1\t2\t10\r\n1\t1\t3\r\n3\t2\t1\r\n"
	test := "2\t3\t7\r\n"
	spec := lastFMSpec()
	for i, body := range []string{train, test} {
		os.WriteFile(filepath.Join(from, spec.Files[i].Base()), []byte(body), 0o644)
		sum := sha256.Sum256([]byte(body))
		spec.Files[i].Size, spec.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	}
	dir := t.TempDir()
	res, err := get(context.Background(), spec, Options{Dir: dir, From: from, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"train.txt": "0 0 1\n1\n2 1\n", "test.txt": "0\n1 2\n2\n"} {
		got, _ := os.ReadFile(filepath.Join(res.Dir, file))
		if string(got) != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if res.Stats["users"] != 3 || res.Stats["items"] != 3 || res.Stats["train_interactions"] != 3 {
		t.Errorf("stats %v", res.Stats)
	}
}

func TestParsePairsRejects(t *testing.T) {
	for in, says := range map[string]string{
		"1\n":           "have 1 fields",
		"0\t1\n":        `id "0" is not in`,
		"1\tx\n":        `id "x"`,
		"1\t2\tabc\n":   `weight "abc"`,
		"1\t2\t3\t4\n":  "have 4 fields",
		"1\t99999999\n": "is not in [1,",
	} {
		if _, err := parsePairs([]byte(in)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("parsePairs(%q) = %v, want %q", in, err, says)
		}
	}
}

// npyBytes builds a version-1 .npy file.
func npyBytes(header string, data []byte) []byte {
	h := header + strings.Repeat(" ", 63-len(header)%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), data...)
}

func TestParseNPY(t *testing.T) {
	le := func(vs ...int32) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, vs)
		return b.Bytes()
	}
	// A Fortran-ordered 2×3 array is column-major on disk.
	a, err := ParseNPY(npyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", le(1, 4, 2, 5, 3, 6)))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Int64s(); fmt.Sprint(got) != "[1 2 3 4 5 6]" || fmt.Sprint(a.Shape) != "[2 3]" {
		t.Errorf("fortran 2×3 read as %v %v", a.Shape, got)
	}
	for _, tc := range []struct{ header, says string }{
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", ""},
		{"{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", "little-endian"},
		{"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "unsupported descr"},
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", "needs 12 bytes, have 8"},
		{"{'descr': '<i4', 'shape': (2,), }", "want descr, fortran_order and shape"},
		{"{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", "twice"},
		{"{'descr': '<i4', 'fortran_order': Maybe, 'shape': (2,)}", "True or False"},
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (-1,)}", "bad dimension"},
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "too large"},
		{"['descr']", "not a dict"},
	} {
		_, err := ParseNPY(npyBytes(tc.header, le(7, 8)))
		if (tc.says == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.says)) {
			t.Errorf("%s: err = %v, want %q", tc.header, err, tc.says)
		}
	}
	if _, err := ParseNPY([]byte("PK\x03\x04")); err == nil {
		t.Error("a zip read as npy")
	}
}

func TestReadNPZLimits(t *testing.T) {
	b, _ := os.ReadFile("testdata/texas.npz")
	if _, err := ReadNPZ(b, 1<<16); err == nil || !strings.Contains(err.Error(), `member "node_features.npy" is 1246724 bytes, above the limit`) {
		t.Errorf("err = %v", err)
	}
	if _, err := ReadNPZ(b[:len(b)/2], 1<<30); err == nil {
		t.Error("half an npz read")
	}
}

func TestUnpickle(t *testing.T) {
	for _, tc := range []struct{ in, want, says string }{
		{"\x80\x02K\x05.", "5", ""},
		{"\x80\x02\x8a\x01\xff.", "-1", ""},
		{"\x80\x02]q\x00(K\x01M\x00\x01e.", "&{[1 256]}", ""},
		{"\x80\x02K\x01K\x02\x86q\x01h\x01\x86.", "[[1 2] [1 2]]", ""},
		{"\x80\x02}(U\x01aK\x01U\x01bN\x88\x86u.", "&{[a b] [1 [<nil> true]]}", ""},
		{"\x80\x02cnumpy\ndtype\nU\x02i4K\x00K\x01\x87R.", "&{{numpy dtype} [i4 0 1] <nil> <nil>}", ""},
		{"K", "", "unexpected end"},
		{".", "", "STOP with 0 values"},
		{"0.", "", "stack underflow"},
		{"]e.", "", "no mark"},
		{"(K\x01\x85.", "", ""}, // TUPLE1 over a mark is fine when a value is above it
		{"(\x85.", "", "stack underflow"},
		{"\x80\x09.", "", "protocol 9"},
		{"I1\n.", "", "unsupported opcode"},
		{"h\x05.", "", "memo 5 not set"},
		{"T\xff\xff\xff\x7f", "", "longer than the data"},
		{"K\x01K\x02R.", "", "call of int64"},
		{"K\x01}b.", "", "build on int64"},
	} {
		v, err := Unpickle([]byte(tc.in))
		switch {
		case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%q: err = %v, want %q", tc.in, err, tc.says)
		case tc.says == "" && tc.want != "" && (err != nil || fmt.Sprint(v) != tc.want):
			t.Errorf("%q = %v (%v), want %s", tc.in, v, err, tc.want)
		}
	}
}

// A damaged test.index is refused with its reason. Each case replaces the
// file's first two ids (2692, 2532: 10 bytes).
func TestPlanetoidRejects(t *testing.T) {
	files := fixtures(t)
	for _, tc := range []struct{ index, says string }{
		{"1708\n1708\n", "listed twice"},
		{"12\n2532\n", "test id 12 outside"},
		{"x\n2532\n", `line 1: "x" is not an integer`},
	} {
		read := func(base string) ([]byte, error) {
			if base == "ind.cora.test.index" {
				return []byte(tc.index + string(files[base][10:])), nil
			}
			return files[base], nil
		}
		if _, err := convertPlanetoid("cora", read); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("index %q: err = %v, want %q", tc.index, err, tc.says)
		}
	}
	read := func(base string) ([]byte, error) {
		if base == "ind.cora.ally" {
			return files["ind.cora.y"], nil
		}
		return files[base], nil
	}
	if _, err := convertPlanetoid("cora", read); err == nil || !strings.Contains(err.Error(), "label rows do not match") {
		t.Errorf("ally of 140 rows: err = %v", err)
	}
	if _, err := convertPlanetoid("cora", func(string) ([]byte, error) { return nil, os.ErrNotExist }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

// texas from the pinned npz: split 0, accuracy, every edge once.
func TestConvertTexas(t *testing.T) {
	b, _ := os.ReadFile("testdata/texas.npz")
	d, err := convertNPZGraph("texas", b)
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 183 || d.Adj.NNZ() != 2*279 || d.Classes != 5 || d.Metric != graph.MetricAccuracy || d.Count(graph.SplitTrain) != 87 {
		t.Errorf("texas: %d nodes, %d edges, %d classes, %s, %d train", d.N(), d.Adj.NNZ()/2, d.Classes, d.Metric, d.Count(graph.SplitTrain))
	}
}
