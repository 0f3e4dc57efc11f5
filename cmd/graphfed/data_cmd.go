package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"graphfed/job"
	"graphfed/workload/dataget"
)

// newDataCmd is `graphfed data`, the parent of the dataset tools.
func newDataCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "data", Short: "Fetch and inspect datasets"}
	cmd.AddCommand(newDataStatsCmd(g), newDataGetCmd(g))
	return cmd
}

// newDataStatsCmd is `graphfed data stats`: flags into job.DataStatsSpec.
func newDataStatsCmd(g *globalFlags) *cobra.Command {
	spec := job.DefaultDataStatsSpec()
	cmd := &cobra.Command{
		Use:   "stats (--aml FILE | --dataset DIR | --lightgcn DIR)",
		Short: "Summarise a dataset: an AMLworld *_Trans.csv, a node-classification TSV directory or a LightGCN directory",
		Long: `Summarise a dataset. --aml reads the *_Patterns.txt beside the file too; a malformed row
fails the command with its file and line, or with --lenient is skipped and counted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.Log, spec.Progress = g.logger(), cmdProgress{}
			r, err := job.DataStats(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("data stats: %w", err)
			}
			return g.emit(Report{Command: "data stats", Dataset: r.Dataset, Clients: r.Clients, Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.AML, "aml", "", "AMLworld transactions file, e.g. HI-Small_Trans.csv")
	f.StringVar(&spec.Dataset, "dataset", "", "node-classification dataset directory (TSV layout)")
	f.StringVar(&spec.LightGCN, "lightgcn", "", "LightGCN-format recommendation dataset directory (train.txt, test.txt)")
	f.BoolVar(&spec.Lenient, "lenient", false, "skip and count malformed AML rows instead of failing on the first")
	f.IntVar(&spec.MaxIssues, "max-issues", spec.MaxIssues, "malformed rows to keep and log under --lenient (all are counted)")
	return cmd
}

// newDataGetCmd is `graphfed data get NAME`: flags into job.DataGetSpec.
func newDataGetCmd(g *globalFlags) *cobra.Command {
	spec, list := job.DefaultDataGetSpec(), false
	cmd := &cobra.Command{
		Use:   "get NAME | --list",
		Short: "Download a public dataset, verify its pinned SHA-256 values and convert it to the TSV or LightGCN layout",
		Long: `Download a public dataset at a pinned commit, check every file's size and SHA-256
against the values pinned in graphfed (a mismatch is refused, nothing is written in
place), convert it, read it back and move it to DIR/NAME.

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
				if err := job.WriteDataCatalog(g.humanOut()); err != nil || !g.json {
					return err
				}
				return g.emit(Report{Command: "data get", Metrics: job.DataCatalog()}, start)
			}
			spec.Name, spec.Log, spec.Progress = args[0], g.logger(), cmdProgress{}
			r, err := job.DataGet(cmd.Context(), spec)
			if err != nil {
				return err
			}
			if err := r.WriteText(g.humanOut(), !g.json); err != nil || !g.json {
				return err
			}
			return g.emit(Report{Command: "data get", Dataset: r.Dataset, Metrics: r.Metrics}, start)
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
