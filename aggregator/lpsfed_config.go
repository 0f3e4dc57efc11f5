package aggregator

import (
	"fmt"
	"math/rand/v2"
	"time"

	"graphfed/spectral"
)

// LPSFed algorithms. FedAvg (AlgoFedAvg) runs on the same client model:
// the sample-weighted average goes to every client, no kernel, no margin.
const (
	AlgoLPSFed    = "lpsfed"     // ρ-personalized mixing of the MLPs and the margin (BC loss)
	AlgoLPSFedBPR = "lpsfed-bpr" // ρ-personalized mixing of the MLPs; BPR clients send no margin
)

// ReferenceStats are the counts the reference graph G_R is drawn with:
// users, items and interactions of an average client subgraph.
type ReferenceStats struct {
	Users, Items, Edges int
}

// ReferenceKernel builds the reference kernel K^R (Eq. 16 on the phi
// lowest eigenvalues of a random bipartite graph with the given counts).
// It must be deterministic in seed: the machine stays replayable.
type ReferenceKernel func(s ReferenceStats, phi int, seed uint64) ([]float64, error)

// LPSFedConfig fixes an LPSFed job's round policy and reference graph.
type LPSFedConfig struct {
	Algo         string // AlgoFedAvg, AlgoLPSFedBPR or AlgoLPSFed
	Rounds       int
	MinClients   int // joins that open round 1
	RoundTimeout time.Duration
	// FreezeRounds is how many rounds at the start distribute nothing
	// (Appendix D.6: "freezes parameter updates during the first two
	// global epochs"): clients warm their local models up alone.
	FreezeRounds int
	// MissedToDead as in Config; 0: 3.
	MissedToDead int
	Phi          int // kernel length Φ; must match the clients'
	// Strict builds G_R from StrictStats instead of the clients' counts
	// (Table 8, "w/o statistics for G_R").
	Strict      bool
	StrictStats ReferenceStats
	// RefEvery rebuilds G_R every RefEvery rounds with a fresh seed; 0
	// builds it once, before round 1.
	RefEvery  int
	Seed      uint64
	Reference ReferenceKernel // required unless Algo is AlgoFedAvg
}

// personalizes reports whether the algorithm mixes by ρ̄ (and so needs K^R).
func (c LPSFedConfig) personalizes() bool { return c.Algo != AlgoFedAvg }

// Validate checks the configuration.
func (c LPSFedConfig) Validate() error {
	switch c.Algo {
	case AlgoFedAvg, AlgoLPSFed, AlgoLPSFedBPR:
	default:
		return fmt.Errorf("aggregator: lpsfed config: unknown algo %q (want fedavg, lpsfed-bpr or lpsfed)", c.Algo)
	}
	switch {
	case c.Rounds < 1:
		return fmt.Errorf("aggregator: lpsfed config: rounds %d < 1", c.Rounds)
	case c.MinClients < 1:
		return fmt.Errorf("aggregator: lpsfed config: min clients %d < 1", c.MinClients)
	case c.RoundTimeout <= 0:
		return fmt.Errorf("aggregator: lpsfed config: round timeout %v must be positive", c.RoundTimeout)
	case c.FreezeRounds < 0 || c.RefEvery < 0 || c.MissedToDead < 0:
		return fmt.Errorf("aggregator: lpsfed config: negative freeze rounds, reference period or missed-to-dead")
	}
	if !c.personalizes() {
		return nil
	}
	switch {
	case c.Phi < 1:
		return fmt.Errorf("aggregator: lpsfed config: phi %d < 1", c.Phi)
	case c.Reference == nil:
		return fmt.Errorf("aggregator: lpsfed config: %s needs a reference kernel builder", c.Algo)
	case c.Strict && (c.StrictStats.Users < 1 || c.StrictStats.Items < 1 || c.StrictStats.Edges < 1):
		return fmt.Errorf("aggregator: lpsfed config: strict mode needs positive assumed counts, have %+v", c.StrictStats)
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
