package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/workload/dataget"
)

// dataGetRoot is the graphfed command with args set.
func dataGetRoot(args ...string) *cobra.Command {
	root := newRootCmd()
	root.SetArgs(args)
	return root
}

// texasServer serves the pinned texas.npz fixture, as edit(b), where
// raw.githubusercontent.com would.
func texasServer(t *testing.T, edit func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "workload", "dataget", "testdata", "texas.npz"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := dataget.Lookup("texas")
	if err != nil {
		t.Fatal(err)
	}
	want := "/" + spec.Repo + "/" + spec.Commit + "/" + spec.Files[0].Path
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		w.Write(edit(bytes.Clone(b)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// graphfed data get texas --base-url URL: the JSON report says where the
// dataset went and what it holds, and the directory loads.
func TestDataGetCommand(t *testing.T) {
	url := texasServer(t, func(b []byte) []byte { return b })
	dir := t.TempDir()
	rep, err := executeForReport(t, dataGetRoot("data", "get", "texas", "--base-url", url, "--dir", dir, "--json", "--log-level", "warn"))
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	if rep.Command != "data get" || rep.Dataset != "texas" || m["dir"] != filepath.Join(dir, "texas") || m["nodes"] != 183.0 || m["layout"] != "tsv" {
		t.Errorf("report %+v", rep)
	}
	files, _ := m["files"].([]any)
	if len(files) != 1 || !strings.Contains(files[0].(map[string]any)["from"].(string), url) {
		t.Errorf("files %v", m["files"])
	}
	if rep, err := executeForReport(t, dataGetRoot("data", "stats", "--dataset", filepath.Join(dir, "texas"), "--json")); err != nil || rep.Metrics["nodes"] != 183.0 {
		t.Errorf("data stats on the fetched dataset: %v %+v", err, rep.Metrics)
	}
}

// A corrupted download fails the command, names the file and both hashes,
// and leaves no dataset directory.
func TestDataGetCorrupted(t *testing.T) {
	url := texasServer(t, func(b []byte) []byte { b[100] ^= 1; return b })
	dir := filepath.Join(t.TempDir(), "data")
	_, err := executeForReport(t, dataGetRoot("data", "get", "texas", "--base-url", url, "--dir", dir, "--log-level", "error"))
	if err == nil || !strings.Contains(err.Error(), "texas.npz") || !strings.Contains(err.Error(), "want b164b99e6c3d43e4") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", dir, err)
	}
}

// --list --json names every dataset with its pinned files.
func TestDataGetList(t *testing.T) {
	rep, err := executeForReport(t, dataGetRoot("data", "get", "--list", "--json"))
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := rep.Metrics["datasets"].([]any)
	if len(ds) != len(dataget.Catalog()) || ds[0].(map[string]any)["name"] != "cora" {
		t.Errorf("datasets %v", rep.Metrics["datasets"])
	}
	if _, err := executeForReport(t, dataGetRoot("data", "get", "--list", "cora")); err == nil {
		t.Error("--list with a name accepted")
	}
}
