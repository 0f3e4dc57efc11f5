package dataget

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// fixtures are the real pinned files kept under testdata: Planetoid Cora's
// eight files and the heterophilous-graphs texas.npz, by base name.
func fixtures(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"testdata/planetoid/ind.cora.*", "testdata/texas.npz"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(p)] = b
		}
	}
	if len(out) != 9 {
		t.Fatalf("want 9 fixture files, have %d", len(out))
	}
	return out
}

// serve is a stand-in for raw.githubusercontent.com: it serves body(base)
// for GET /OWNER/REPO/COMMIT/PATH of any catalog file, 404 otherwise, and
// records the paths asked for.
func serve(t *testing.T, body func(w http.ResponseWriter, base string, b []byte)) (*httptest.Server, *[]string) {
	t.Helper()
	files := fixtures(t)
	known := map[string]string{}
	for _, s := range Catalog() {
		for _, f := range s.Files {
			known["/"+s.Repo+"/"+s.Commit+"/"+f.Path] = f.Base()
		}
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		base, ok := known[r.URL.Path]
		b, have := files[base]
		if !ok || !have {
			http.NotFound(w, r)
			return
		}
		body(w, base, b)
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func plain(w http.ResponseWriter, _ string, b []byte) { w.Write(b) }

// Cora fetched from the pinned Planetoid files is the shipped
// examples/data/cora, byte for byte, and says where it came from.
func TestGetCoraMatchesShippedData(t *testing.T) {
	srv, asked := serve(t, plain)
	dir := t.TempDir()
	var last Progress
	res, err := Get(context.Background(), "cora", Options{Dir: dir, BaseURL: srv.URL, Log: zerolog.Nop(),
		Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if len(*asked) != 8 || !strings.HasPrefix((*asked)[0], "/kimiyoung/planetoid/"+planetoidCommit+"/data/ind.cora.") {
		t.Errorf("asked for %v", *asked)
	}
	if res.Dir != filepath.Join(dir, "cora") || res.Layout != LayoutTSV || len(res.Files) != 8 {
		t.Errorf("result %+v", res)
	}
	spec, _ := Lookup("cora")
	if last.Done != spec.Bytes() || last.Total != spec.Bytes() {
		t.Errorf("last progress %+v, want %d of %d", last, spec.Bytes(), spec.Bytes())
	}
	for _, f := range []string{"edges.tsv", "features.tsv", "labels.tsv", "split.tsv"} {
		got, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "examples", "data", "cora", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from examples/data/cora/%s", f, f)
		}
	}
	src, err := os.ReadFile(filepath.Join(res.Dir, sourceFile))
	if err != nil || !bytes.Contains(src, []byte(spec.Files[0].SHA256)) || !bytes.Contains(src, []byte(srv.URL)) {
		t.Errorf("source.json lacks the pinned hash or the URL: %v\n%s", err, src)
	}
	if res.Stats["nodes"] != 2708 || res.Stats["undirected_edges"] != 5278 || res.Stats["test"] != 1000 {
		t.Errorf("stats %v", res.Stats)
	}
	assertOnly(t, dir, "cora")
}

// assertOnly checks that dir holds exactly the named entries: no staging
// directory or partial file is left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// A file that is not the pinned one (corrupted, truncated, cut off,
// longer, missing) fails the command with the file's name and both
// hashes or sizes, and nothing is written where the dataset goes.
func TestGetRefusesFilesThatAreNotThePinnedOnes(t *testing.T) {
	const want = "b164b99e6c3d43e4ab07488ec59bd8c815f90cbc1bd4cf425ce587d2b534d844"
	for _, tc := range []struct {
		name     string
		body     func(w http.ResponseWriter, base string, b []byte)
		mismatch bool
		says     []string
	}{
		{"corrupted", func(w http.ResponseWriter, _ string, b []byte) {
			c := bytes.Clone(b)
			c[len(c)/2] ^= 0x40
			w.Write(c)
		}, true, []string{"texas.npz", "sha256 ", "want " + want}},
		{"truncated", func(w http.ResponseWriter, _ string, b []byte) { w.Write(b[:len(b)-100]) },
			true, []string{"texas.npz", "truncated: 28486 of 28586 bytes", "want " + want}},
		{"connection cut", func(w http.ResponseWriter, _ string, b []byte) {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Write(b[:1000]) // the server closes the connection short of what it announced
		}, false, []string{"texas.npz", "truncated after 1000 of 28586 bytes"}},
		{"longer", func(w http.ResponseWriter, _ string, b []byte) {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
			w.Write(append(bytes.Clone(b), 0))
		},
			true, []string{"texas.npz", "28587 bytes announced, the pinned file has 28586"}},
		{"longer without a length", func(w http.ResponseWriter, _ string, b []byte) {
			w.(http.Flusher).Flush() // chunked: no Content-Length
			w.Write(append(bytes.Clone(b), 0))
		}, true, []string{"texas.npz", "longer than the pinned 28586 bytes"}},
		{"not found", func(w http.ResponseWriter, _ string, _ []byte) { http.NotFound(w, nil) },
			false, []string{"texas.npz", "404 Not Found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, tc.body)
			dir := t.TempDir()
			_, err := Get(context.Background(), "texas", Options{Dir: dir, BaseURL: srv.URL, Log: zerolog.Nop()})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if errors.Is(err, ErrMismatch) != tc.mismatch {
				t.Errorf("errors.Is(%v, ErrMismatch) = %v", err, !tc.mismatch)
			}
			assertOnly(t, dir)
		})
	}
}

// An existing dataset is kept unless Force; with Force it is replaced only
// once the new one is complete.
func TestGetExistingDestination(t *testing.T) {
	srv, _ := serve(t, plain)
	dir := t.TempDir()
	dest := filepath.Join(dir, "texas")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dest, "old"), []byte("x"), 0o644)
	opt := Options{Dir: dir, BaseURL: srv.URL, Log: zerolog.Nop()}
	if _, err := Get(context.Background(), "texas", opt); err == nil || !strings.Contains(err.Error(), "exists (use --force") {
		t.Fatalf("err = %v", err)
	}
	bad, _ := serve(t, func(w http.ResponseWriter, _ string, b []byte) { w.Write(b[:10]) })
	opt.Force, opt.BaseURL = true, bad.URL
	if _, err := Get(context.Background(), "texas", opt); err == nil {
		t.Fatal("a truncated file replaced the dataset")
	}
	if _, err := os.Stat(filepath.Join(dest, "old")); err != nil {
		t.Errorf("the old dataset is gone after a failed replace: %v", err)
	}
	opt.BaseURL = srv.URL
	res, err := Get(context.Background(), "texas", opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "old")); err == nil {
		t.Error("--force kept the old files")
	}
	if res.Stats["nodes"] != 183 || res.Stats["undirected_edges"] != 279 || res.Stats["classes"] != 5 {
		t.Errorf("stats %v", res.Stats)
	}
	assertOnly(t, dir, "texas")
}

// Cancelling the context stops a download in flight and leaves nothing.
func TestGetCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, _ := serve(t, func(w http.ResponseWriter, _ string, b []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b[:100])
		w.(http.Flusher).Flush()
		cancel()
		<-ctx.Done()
	})
	dir := filepath.Join(t.TempDir(), "data")
	_, err := Get(ctx, "texas", Options{Dir: dir, BaseURL: srv.URL, Log: zerolog.Nop()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory Get created is left: %v", err)
	}
}

// Files already on disk (Options.From) are verified like downloads.
func TestGetFromLocalFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Get(context.Background(), "texas", Options{Dir: dir, From: "testdata", Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	from := t.TempDir()
	b, _ := os.ReadFile("testdata/texas.npz")
	os.WriteFile(filepath.Join(from, "texas.npz"), b[:len(b)-1], 0o644)
	_, err := Get(context.Background(), "texas", Options{Dir: t.TempDir(), From: from, Log: zerolog.Nop()})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), filepath.Join(from, "texas.npz")) {
		t.Errorf("err = %v", err)
	}
}
