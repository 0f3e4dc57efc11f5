package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	joblib "graphfed/job"
)

// newSpectralCmd is `graphfed spectral`, the parent of the spectral tools.
func newSpectralCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "spectral", Short: "Spectral tools: lowest Laplacian eigenpairs"}
	cmd.AddCommand(newSpectralEigCmd(g))
	return cmd
}

// newSpectralEigCmd is `graphfed spectral eig`.
func newSpectralEigCmd(g *globalFlags) *cobra.Command {
	spec := joblib.DefaultSpectralEigSpec()
	cmd := &cobra.Command{
		Use:   "eig (--lightgcn DIR | --dataset DIR) --phi P [--tol 1e-10] [--seed S]",
		Short: "The phi lowest eigenpairs of a graph's normalized Laplacian (LPSFed's P̄ and λ)",
		Long: `Compute the phi lowest eigenpairs of L = I − D^-1/2·A·D^-1/2 (of the bipartite training graph
with --lightgcn, the adjacency with --dataset) by block thick-restart Lanczos, every residual checked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			spec.Log, spec.Progress = g.logger(), cmdProgress{}
			r, err := joblib.SpectralEig(cmd.Context(), spec)
			if err != nil {
				return fmt.Errorf("spectral eig: %w", err)
			}
			return g.emit(Report{Command: "spectral eig", Dataset: r.Dataset, Seed: int64(spec.Seed), Metrics: r.Metrics}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.LightGCN, "lightgcn", "", "LightGCN-format dataset directory (e.g. data/lastfm from graphfed data get lastfm)")
	f.StringVar(&spec.Dataset, "dataset", "", "node-classification dataset directory in the TSV layout (e.g. examples/data/cora)")
	f.IntVar(&spec.Phi, "phi", 0, "number of lowest eigenpairs (LPSFed's cut-off Φ, 128 in the paper)")
	f.Float64Var(&spec.Options.Tol, "tol", spec.Options.Tol, "bound on every residual ‖L·v − λ·v‖")
	f.Uint64Var(&spec.Seed, "seed", spec.Seed, "random seed of the Lanczos start blocks")
	f.IntVar(&spec.Options.Block, "block", 0, "Lanczos block size (0: default 4)")
	f.IntVar(&spec.Options.MaxBasis, "max-basis", 0, "Lanczos basis size before a thick restart (0: default max(2·phi, phi+32))")
	return cmd
}
