package aggregator

import (
	"fmt"
	"math/rand/v2"

	"graphfed/spectral"
)

// LPSFed algorithms. FedAvg on the LPSFed client model is AlgoFedAvg: the
// sample-weighted average goes to every client, no kernel, no margin.
const (
	AlgoLPSFed    = "lpsfed"     // ρ-personalized mixing of the MLPs and the margin (BC loss)
	AlgoLPSFedBPR = "lpsfed-bpr" // ρ-personalized mixing of the MLPs; BPR clients send no margin
)

// MaxPhi bounds the reference kernel's length Φ: a kernel is sent in every
// round-open, and Φ eigenpairs are computed for it.
const MaxPhi = 4096

// ReferenceStats are the counts the reference graph G_R is drawn with:
// users, items and interactions of an average client subgraph.
type ReferenceStats struct {
	Users, Items, Edges int
}

// ReferenceKernel builds the reference kernel K^R (Eq. 16 on the phi
// lowest eigenvalues of a random bipartite graph with the given counts).
// It must be deterministic in seed: the machine stays replayable.
type ReferenceKernel func(s ReferenceStats, phi int, seed uint64) ([]float64, error)

// LPSFedConfig is the reference graph of an lpsfed or lpsfed-bpr job
// (Config.LPSFed).
type LPSFedConfig struct {
	Phi int // kernel length Φ; must match the clients'
	// Strict builds G_R from StrictStats instead of the clients' counts
	// (Table 8, "w/o statistics for G_R").
	Strict      bool
	StrictStats ReferenceStats
	// RefEvery rebuilds G_R every RefEvery rounds with a fresh seed; 0
	// builds it once, before round 1.
	RefEvery int
	// Uniform sends every contributor the plain mean θ̄ and M̄ (ρ̄_c = 1
	// for all): LPSFed without its personalization, Table 4's "w/o per"
	// ablation. ρ_c is still released and reported.
	Uniform bool `json:",omitempty"`
	Seed    uint64
	// Reference builds K^R; nil: GNMKReference. It is code, not
	// configuration: snapshots do not record it, and a restored job uses
	// the one its adapter is configured with.
	Reference ReferenceKernel `json:"-"`
}

// validate checks the reference configuration of a personalizing job.
func (c LPSFedConfig) validate() error {
	switch {
	case c.Phi < 1 || c.Phi > MaxPhi:
		return fmt.Errorf("aggregator: config: lpsfed phi %d outside [1, %d]", c.Phi, MaxPhi)
	case c.RefEvery < 0:
		return fmt.Errorf("aggregator: config: lpsfed reference period %d < 0", c.RefEvery)
	case c.Strict && (c.StrictStats.Users < 1 || c.StrictStats.Items < 1 || c.StrictStats.Edges < 1):
		return fmt.Errorf("aggregator: config: lpsfed strict mode needs positive assumed counts, have %+v", c.StrictStats)
	}
	return nil
}

// GNMKReference is the ReferenceKernel LPSFed uses (Appendix D.3): a GNMK
// bipartite graph with exactly the given numbers of users, items and
// interactions, drawn from seed, and the low-pass kernel of its phi
// lowest eigenvalues (spectral.ReferenceKernel). The eigensolver is
// seeded too, so the kernel is a deterministic function of its inputs.
func GNMKReference(s ReferenceStats, phi int, seed uint64) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6e6d6b))
	k, err := spectral.ReferenceKernel(spectral.ReferenceGNMK, spectral.GraphStats{Users: s.Users, Items: s.Items, Edges: s.Edges},
		phi, rng, spectral.EigenOptions{Seed: seed, Tol: 1e-8})
	if err != nil {
		return nil, fmt.Errorf("aggregator: gnmk reference: %w", err)
	}
	return k, nil
}

// normalizeRho is Eq. 12, ρ̄_c = 1 − (ρ_c − min ρ)/(max ρ − min ρ): the
// client closest to the reference gets 1 (the global model whole), the
// farthest 0 (keeps its own); when all ρ_c are equal every ρ̄_c is 1
// (spectral.MinMaxNormalize). The machine checks finiteness on receipt,
// so the only error left, no values, gives no weights.
func normalizeRho(rho []float64) []float64 {
	out, err := spectral.MinMaxNormalize(rho)
	if err != nil {
		return []float64{}
	}
	return out
}
