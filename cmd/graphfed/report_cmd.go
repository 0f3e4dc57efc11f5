package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"graphfed/runreport"
)

// newReportCmd is `graphfed report DIR`: rebuild a run directory's
// report.html from its files (summary.json, rounds.csv, clients.csv,
// ledger.jsonl), as `sim --out DIR` writes it.
func newReportCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Rebuild a run directory's report.html (one self-contained page)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := runreport.WriteDir(cmd.Context(), args[0]); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(g.humanOut(), "report written to %s\n", filepath.Join(args[0], runreport.ReportFile))
			return nil
		},
	}
}
