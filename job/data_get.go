package job

import (
	"context"

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
