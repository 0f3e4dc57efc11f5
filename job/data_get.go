package job

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"graphfed/runreport"
	"graphfed/workload/dataget"
)

// DataGetSpec is a catalog dataset to download, verify and convert
// (`graphfed data get NAME`, dataget.Get); Options.Progress is the spec's.
type DataGetSpec struct {
	Name string
	dataget.Options
	Progress Progress // nil: none shown
}

// DefaultDataGetSpec writes to data/NAME from the pinned repositories.
func DefaultDataGetSpec() DataGetSpec {
	return DataGetSpec{Options: dataget.Options{Dir: "data", BaseURL: dataget.DefaultBaseURL}}
}

// DataGetResult is what DataGet wrote and the report's metrics: where it
// went, its source, its files and its converted counts.
type DataGetResult struct {
	dataget.Result
	Metrics map[string]any
}

// DataGet fetches the dataset spec names.
func DataGet(ctx context.Context, spec DataGetSpec) (DataGetResult, error) {
	ds, err := dataget.Lookup(spec.Name)
	if err != nil {
		return DataGetResult{}, err
	}
	opt := spec.Options
	bar := progressOr(spec.Progress).Stage("get "+ds.Name, int(ds.Bytes()))
	opt.Progress = func(pr dataget.Progress) { bar.Update(int(pr.Done), pr.File) }
	res, err := dataget.Get(ctx, ds.Name, opt)
	bar.Finish()
	if err != nil {
		return DataGetResult{}, err
	}
	m := map[string]any{"dir": res.Dir, "layout": res.Layout, "repo": res.Repo, "commit": res.Commit, "files": res.Files}
	for k, v := range res.Stats {
		m[k] = v
	}
	return DataGetResult{Result: res, Metrics: m}, nil
}

// DataCatalog is the report of the datasets DataGet offers: their names,
// layouts, sizes, sources, titles, licences and files.
func DataCatalog() map[string]any {
	var names []any
	for _, s := range dataget.Catalog() {
		names = append(names, map[string]any{"name": s.Name, "layout": s.Layout, "bytes": s.Bytes(), "repo": s.Repo,
			"commit": s.Commit, "title": s.Title, "licence": s.Licence, "files": s.Files})
	}
	return map[string]any{"datasets": names}
}

// WriteText writes the result's human line (what was fetched, verified
// and written) and with stats a second one, the converted dataset's
// counts sorted by name.
func (r DataGetResult) WriteText(w io.Writer, stats bool) error {
	_, err := fmt.Fprintf(w, "%s: %d files from %s@%.7s verified (SHA-256), %s layout written to %s\n",
		r.Dataset, len(r.Files), r.Repo, r.Commit, r.Layout, r.Dir)
	if err != nil || !stats {
		return err
	}
	keys := slices.Sorted(maps.Keys(r.Stats))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %v", k, r.Stats[k])
	}
	_, err = fmt.Fprintln(w, "  ", strings.Join(parts, ", "))
	return err
}

// WriteDataCatalog writes the datasets DataGet offers, one a line: name,
// layout, size, source and title.
func WriteDataCatalog(w io.Writer) error {
	for _, s := range dataget.Catalog() {
		if _, err := fmt.Fprintf(w, "%-19s %-8s %7s  %s@%.7s  %s\n", s.Name, s.Layout, runreport.HumanBytes(s.Bytes()), s.Repo, s.Commit, s.Title); err != nil {
			return err
		}
	}
	return nil
}
