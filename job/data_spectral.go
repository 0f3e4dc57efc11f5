package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"graphfed/graph"
	"graphfed/spectral"
)

// SpectralEigSpec asks for the Phi lowest eigenpairs of a dataset's
// normalized Laplacian (`graphfed spectral eig`): of exactly one of a
// LightGCN directory (the user–item graph of its training interactions) or
// a TSV directory (Dataset, its adjacency). Start from
// DefaultSpectralEigSpec; Options.Seed is Seed and Options.Progress the
// spec's.
type SpectralEigSpec struct {
	LightGCN, Dataset string
	Phi               int
	Options           spectral.EigenOptions // Tol must be positive
	Seed              uint64
	Log               zerolog.Logger
	Progress          Progress         // nil: none shown
	Now               func() time.Time // nil: time.Now; times the load and the solve
}

// DefaultEigTol is the residual bound of SpectralEig unless told.
const DefaultEigTol = 1e-10

// DefaultSpectralEigSpec solves to DefaultEigTol with seed 1.
func DefaultSpectralEigSpec() SpectralEigSpec {
	return SpectralEigSpec{Options: spectral.EigenOptions{Tol: DefaultEigTol}, Seed: 1}
}

// SpectralEig loads the graph, solves for the eigenpairs, checks every
// residual directly and reports the spectrum's range and the solver's
// work. A residual above 1e-8 is logged, not refused.
func SpectralEig(ctx context.Context, spec SpectralEigSpec) (DataReport, error) {
	now := spec.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	phi, opt := spec.Phi, spec.Options
	if (spec.LightGCN == "") == (spec.Dataset == "") {
		return DataReport{}, errors.New("give exactly one of --lightgcn DIR, --dataset DIR")
	}
	if phi < 1 {
		return DataReport{}, fmt.Errorf("--phi %d, want at least 1", phi)
	}
	if !(opt.Tol > 0) {
		return DataReport{}, fmt.Errorf("--tol %v, want positive", opt.Tol)
	}
	l, name, err := loadLaplacian(spec.LightGCN, spec.Dataset)
	if err != nil {
		return DataReport{}, err
	}
	if err := ctx.Err(); err != nil {
		return DataReport{}, err
	}
	loaded := now()
	opt.Seed = spec.Seed
	bar := progressOr(spec.Progress).Stage("eig", phi)
	opt.Progress = func(e spectral.EigenProgress) {
		bar.Update(min(e.Converged, phi), fmt.Sprintf("component %d (%d nodes), restart %d, %d matvecs",
			e.Component, e.Nodes, e.Restarts, e.MatVecs))
	}
	e, err := spectral.LowestEigenpairs(l, phi, opt)
	bar.Finish()
	if err != nil {
		return DataReport{}, err
	}
	solved := now()
	resid, err := spectral.MaxResidual(l, e)
	if err != nil {
		return DataReport{}, err
	}
	if !(resid <= 1e-8) {
		spec.Log.Warn().Float64("max_residual", resid).Msg("an eigenpair misses the 1e-8 residual bound")
	}
	st := e.Stats
	return DataReport{Dataset: name, Metrics: map[string]any{
		"lambda_min": e.Values[0], "lambda_max": e.Values[phi-1], "max_residual": resid,
		"orthogonality": spectral.Orthogonality(e), "phi": phi, "nodes": l.N(), "nnz": l.NNZ(),
		"components": st.Components, "isolated": st.Isolated, "folded": st.Folded,
		"restarts": st.Restarts, "iterations": st.Iterations, "matvecs": st.MatVecs, "probes": st.Probes,
		"tol": opt.Tol, "load_seconds": loaded.Sub(start).Seconds(), "solve_seconds": solved.Sub(loaded).Seconds(),
	}}, nil
}

// loadLaplacian builds the normalized Laplacian of a LightGCN directory
// (the user–item graph of the training split) or a TSV dataset directory.
func loadLaplacian(lightgcn, dataset string) (*spectral.Laplacian, string, error) {
	if lightgcn != "" {
		d, err := graph.LoadLightGCN(lightgcn)
		if err != nil {
			return nil, "", err
		}
		l, err := spectral.NewBipartiteLaplacian(d.Train)
		return l, d.Name, err
	}
	d, err := graph.LoadTSV(dataset)
	if err != nil {
		return nil, "", err
	}
	name := d.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(dataset))
	}
	l, err := spectral.NewLaplacian(d.Adj)
	return l, name, err
}
