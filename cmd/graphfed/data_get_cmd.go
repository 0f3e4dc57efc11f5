package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
	"graphfed/workload/dataget"
)

// newDataGetCmd is `graphfed data get NAME`: flags into job.DataGetSpec.
func newDataGetCmd(g *globalFlags) *cobra.Command {
	var (
		spec = joblib.DefaultDataGetSpec()
		list bool
	)
	cmd := &cobra.Command{
		Use:   "get NAME | --list",
		Short: "Download a public dataset, verify its pinned SHA-256 values and convert it to the TSV or LightGCN layout",
		Long: `Download a public dataset from its repository at a pinned commit, check every
file's size and SHA-256 against the values pinned in graphfed, convert it, read
it back with graphfed's loader, and move it to DIR/NAME (default data/NAME).
A file that does not match is refused with its name and both hashes, and
nothing is written in place. --list shows the datasets and their sources.

Datasets: ` + strings.Join(dataget.Names(), ", ") + `.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if (list && len(args) != 0) || (!list && len(args) != 1) {
				return fmt.Errorf("data get: give one dataset NAME or --list")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if list {
				return g.emitCatalog(start)
			}
			spec.Name, spec.Log, spec.Progress = args[0], g.logger(), cmdProgress{}
			res, err := joblib.DataGet(cmd.Context(), spec)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.humanOut(), "%s: %d files from %s@%.7s verified (SHA-256), %s layout written to %s\n",
				res.Dataset, len(res.Files), res.Repo, res.Commit, res.Layout, res.Dir)
			if !g.json {
				fmt.Fprintln(g.humanOut(), "  ", statsLine(res.Stats))
				return nil
			}
			return g.emit(Report{Command: "data get", Dataset: res.Dataset, Metrics: res.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Dir, "dir", spec.Dir, "parent directory: the dataset goes to DIR/NAME")
	f.StringVar(&spec.BaseURL, "base-url", spec.BaseURL, "where files are fetched from, as BASE/OWNER/REPO/COMMIT/PATH (a mirror)")
	f.StringVar(&spec.From, "from", "", "read the files from this local directory (by file name) instead of downloading them; they are verified all the same")
	f.BoolVar(&spec.Force, "force", false, "replace an existing DIR/NAME (only once the new one is complete)")
	f.BoolVar(&list, "list", false, "list the datasets with their sources and sizes")
	return cmd
}

// emitCatalog prints the datasets data get offers.
func (g *globalFlags) emitCatalog(start time.Time) error {
	out := g.humanOut()
	for _, s := range dataget.Catalog() {
		fmt.Fprintf(out, "%-19s %-8s %7s  %s@%.7s  %s\n", s.Name, s.Layout, humanBytes(s.Bytes()), s.Repo, s.Commit, s.Title)
	}
	if !g.json {
		return nil
	}
	return g.emit(Report{Command: "data get", Metrics: joblib.DataCatalog()}, start)
}

// statsLine is the converted dataset's counts, sorted by name.
func statsLine(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %v", k, m[k])
	}
	return strings.Join(parts, ", ")
}
