package dataget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// Options say where a dataset comes from and where it goes. The zero value
// downloads from DefaultBaseURL into ./data/NAME, without logs.
type Options struct {
	// Dir is the parent directory; the dataset goes to Dir/NAME.
	Dir string
	// BaseURL replaces DefaultBaseURL (a mirror, or a test server); the
	// files are fetched from BaseURL/OWNER/REPO/COMMIT/PATH.
	BaseURL string
	// From, when set, reads the files from this local directory (by base
	// name) instead of downloading them; they are verified all the same.
	From string
	// Force replaces an existing Dir/NAME.
	Force bool
	// Client makes the requests; nil is defaultClient(). A download ends
	// when the context passed to Get does.
	Client   *http.Client
	Log      zerolog.Logger
	Progress func(Progress)
}

// FileResult says where a verified file came from.
type FileResult struct {
	Name   string `json:"name"`
	From   string `json:"from"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Result is what Get put where.
type Result struct {
	Dataset string         `json:"dataset"`
	Dir     string         `json:"dir"`
	Layout  Layout         `json:"layout"`
	Repo    string         `json:"repo"`
	Commit  string         `json:"commit"`
	Files   []FileResult   `json:"files"`
	Stats   map[string]any `json:"stats"`
}

// sourceFile is written beside the converted files: what they were built
// from, so that the dataset can be traced and re-verified.
const sourceFile = "source.json"

// Get fetches the catalog dataset name, verifies every file against its
// pinned size and SHA-256, converts it, reads the result back with the
// loader, and only then moves it to opt.Dir/name. On any error, or when ctx
// ends, nothing is left behind but what was there before.
func Get(ctx context.Context, name string, opt Options) (Result, error) {
	spec, err := Lookup(name)
	if err != nil {
		return Result{}, err
	}
	return get(ctx, spec, opt)
}

func get(ctx context.Context, spec Spec, opt Options) (Result, error) {
	fail := func(err error) (Result, error) { return Result{}, fmt.Errorf("dataget: get %s: %w", spec.Name, err) }
	if opt.Dir == "" {
		opt.Dir = "data"
	}
	if opt.BaseURL == "" {
		opt.BaseURL = DefaultBaseURL
	}
	if opt.Client == nil {
		opt.Client = defaultClient()
	}
	dest := filepath.Join(opt.Dir, spec.Name)
	if _, err := os.Stat(dest); err == nil && !opt.Force {
		return fail(fmt.Errorf("%s exists (use --force to replace it)", dest))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if _, err := os.Stat(opt.Dir); errors.Is(err, fs.ErrNotExist) {
		// Created here, so removed again if nothing is installed (Remove
		// leaves a directory that is no longer empty).
		defer os.Remove(opt.Dir)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return fail(err)
	}
	// The staging directory sits beside dest, so the final rename stays on
	// one file system and is atomic.
	stage, err := os.MkdirTemp(opt.Dir, "."+spec.Name+".partial-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(stage)
	raw, out := filepath.Join(stage, "raw"), filepath.Join(stage, spec.Name)
	if err := os.Mkdir(raw, 0o755); err != nil {
		return fail(err)
	}
	f := &fetcher{spec: spec, opt: opt, total: spec.Bytes(), progress: opt.Progress}
	files, err := f.fetchAll(ctx, raw)
	if err != nil {
		return fail(err)
	}
	read := func(base string) ([]byte, error) { return os.ReadFile(filepath.Join(raw, base)) }
	start := time.Now()
	if err := spec.convert(spec, read, out); err != nil {
		return fail(fmt.Errorf("convert: %w", err))
	}
	stats, err := readBack(spec, out)
	if err != nil {
		return fail(fmt.Errorf("converted files do not load: %w", err))
	}
	opt.Log.Info().Str("dataset", spec.Name).Dur("took", time.Since(start)).Msg("converted and read back")
	res := Result{Dataset: spec.Name, Dir: dest, Layout: spec.Layout, Repo: spec.Repo, Commit: spec.Commit, Files: files, Stats: stats}
	if err := writeSource(out, spec, files); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(context.Cause(ctx))
	}
	if err := install(out, dest, stage); err != nil {
		return fail(err)
	}
	return res, nil
}

// defaultClient is the default transport (proxies from the environment)
// with a bound on the wait for a response's headers, so that a server that
// accepts the connection and says nothing fails the file instead of
// hanging the command.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: t}
}

// install moves the converted directory to dest, moving an existing dest
// into the staging directory first (removed with it).
func install(out, dest, stage string) error {
	if _, err := os.Stat(dest); err == nil {
		if err := os.Rename(dest, filepath.Join(stage, "previous")); err != nil {
			return err
		}
	}
	return os.Rename(out, dest)
}

// readBack loads the converted files with graphfed's own loader and
// summarises them.
func readBack(spec Spec, dir string) (map[string]any, error) {
	if spec.Layout == LayoutLightGCN {
		d, err := graph.LoadLightGCN(dir)
		if err != nil {
			return nil, err
		}
		return map[string]any{"users": d.Users, "items": d.Items, "train_interactions": d.NumTrain(), "test_interactions": d.NumTest()}, nil
	}
	d, err := graph.LoadTSV(dir)
	if err != nil {
		return nil, err
	}
	unlabelled := 0
	for _, y := range d.Labels {
		if y < 0 {
			unlabelled++
		}
	}
	return map[string]any{"nodes": d.N(), "undirected_edges": d.Adj.NNZ() / 2, "features": d.NumFeatures(), "classes": d.Classes,
		"train": d.Count(graph.SplitTrain), "val": d.Count(graph.SplitVal), "test": d.Count(graph.SplitTest),
		"unlabeled_nodes": unlabelled, "metric": d.ScoreMetric()}, nil
}

// writeSource records the provenance beside the converted files.
func writeSource(dir string, spec Spec, files []FileResult) error {
	src := struct {
		Spec
		Fetched []FileResult `json:"fetched"`
	}{spec, files}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(src); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sourceFile), b.Bytes(), 0o644)
}
