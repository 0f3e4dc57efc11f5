package deploy

import (
	"graphfed/lpsfed"
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
