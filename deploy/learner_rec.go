package deploy

import (
	"github.com/rs/zerolog"

	"graphfed/lpsfed"
	"graphfed/workload/rec"
)

// RecOptions are a recommendation client's settings.
type RecOptions struct {
	// Model is the client model; its Loss follows the algorithm
	// (lpsfed.LossFor) and its Seed is LearnerOptions.Seed.
	Model lpsfed.Config
	Phi   int // low-pass cut-off Φ: eigenpairs of the client graph; must match the aggregator's
	// EigenSeed seeds the eigensolver (the simulation uses the job's seed
	// for every client; any value gives the same eigenspace up to sign).
	EigenSeed uint64
	// Strict sends no subgraph counts with the hello (the aggregator then
	// builds its reference from assumed counts).
	Strict bool
}

// DefaultRecOptions are LPSFed's paper setting with Φ = 128, as `graphfed
// sim --lightgcn` runs it.
func DefaultRecOptions() RecOptions {
	return RecOptions{Model: lpsfed.DefaultConfig(), Phi: 128, EigenSeed: 1}
}

// recLearner reads a client's LightGCN directory, computes its low-pass
// eigenpairs and kernel (rec.Prepare, as the simulation does) and builds
// its LPSFed learner with the loss algo trains with.
func recLearner(algo string, o LearnerOptions, log zerolog.Logger) (Learned, error) {
	d, err := rec.LoadClient(o.Dir)
	if err != nil {
		return Learned{}, err
	}
	p, err := rec.Prepare(d, rec.PrepareOptions{Phi: o.Rec.Phi, Seed: o.Rec.EigenSeed})
	if err != nil {
		return Learned{}, err
	}
	mc := o.Rec.Model
	mc.Loss = lpsfed.LossFor(algo)
	mc.Seed = o.Seed
	m, err := lpsfed.NewModel(p.Data, p.Vectors, mc)
	if err != nil {
		return Learned{}, err
	}
	l, err := lpsfed.NewLearner(lpsfed.LearnerConfig{Strict: o.Rec.Strict, Log: log}, m, p.Kernel)
	if err != nil {
		return Learned{}, err
	}
	return Learned{Learner: l, Stats: map[string]any{"users": d.Users, "items": d.Items, "train": d.Train.NNZ(),
		"test_users": p.TestUsers, "phi": p.Vectors.Cols, "components": p.Components}}, nil
}
