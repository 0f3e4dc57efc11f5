package bus

import (
	"fmt"
	"math"

	"graphfed/secagg"
)

// SecAggRound is a round opening's secure-aggregation section
// (RoundOpen.SecAgg): the cohort the aggregator fixed as the round opened
// and everything the parties need to agree on the round's
// secagg.Config and secagg.Encoding (Protocol). It is signed with the
// round opening, so a party derives its configuration from what the
// aggregator committed to, and every message of the round carries the
// configuration's digest.
//
// The masked vector of a party is its released parameters, then (Grad)
// its released gradient estimator, then the weight slot: a CE-FedGNN
// party masks W and G in one vector of 2·Params + 1 words.
type SecAggRound struct {
	Cohort    []string `msgpack:"cohort"` // sorted, unique
	Threshold int      `msgpack:"t"`
	Degree    int      `msgpack:"k,omitempty"` // of the random graph above secagg.CompleteGraphMax; 0: the default
	GraphSeed []byte   `msgpack:"graph_seed"`  // 32 bytes
	Bits      int      `msgpack:"b"`
	// Clip is the L2 bound of a party's vector (its released parameters
	// and estimator together) and MaxWeight the largest weight a party
	// may put in the weight slot; with the cohort they fix the scale.
	Clip      float64 `msgpack:"clip"`
	MaxWeight uint64  `msgpack:"max_weight"`
	Params    int     `msgpack:"params"`
	Grad      bool    `msgpack:"grad,omitempty"`
	// Unit: every input weighs 1, not its sample count (LPSFed's mean is
	// unweighted); the staleness factor aside.
	Unit bool `msgpack:"unit,omitempty"`
	// Stale[i] is the weight factor of an update i+1 rounds late, by the
	// aggregator's staleness policy: an agent whose update missed its
	// round's secure sum folds it, so weighted, into its input to this
	// one (0 or past the end: dropped).
	Stale []float64 `msgpack:"stale,omitempty"`
}

// maxStaleAnnounced bounds SecAggRound.Stale.
const maxStaleAnnounced = 256

// Dim is the coordinates of a masked vector before its weight slot.
func (r *SecAggRound) Dim() int {
	if r.Grad {
		return 2 * r.Params
	}
	return r.Params
}

// StaleWeight is the factor of an update late rounds late (0: dropped).
func (r *SecAggRound) StaleWeight(late uint64) float64 {
	if late == 0 {
		return 1
	}
	if late > uint64(len(r.Stale)) {
		return 0
	}
	return r.Stale[late-1]
}

// Protocol is round's configuration of job's secure aggregation and its
// fixed-point encoding, as both sides derive them.
func (r *SecAggRound) Protocol(job string, round uint64) (secagg.Config, secagg.Encoding, error) {
	const op = "bus: secure aggregation of round"
	if len(r.GraphSeed) != 32 {
		return secagg.Config{}, secagg.Encoding{}, fmt.Errorf("%s %d: graph seed of %d bytes, want 32", op, round, len(r.GraphSeed))
	}
	if r.Params < 1 {
		return secagg.Config{}, secagg.Encoding{}, fmt.Errorf("%s %d: %d parameters", op, round, r.Params)
	}
	enc, err := secagg.NewEncoding(r.Clip, r.MaxWeight, len(r.Cohort), r.Dim(), r.Bits)
	if err != nil {
		return secagg.Config{}, secagg.Encoding{}, fmt.Errorf("%s %d: %w", op, round, err)
	}
	cfg := secagg.Config{Job: job, Round: round, Aggregator: AggregatorID, Parties: r.Cohort, Threshold: r.Threshold,
		Degree: r.Degree, VectorLen: enc.Len(), Bits: enc.Bits}
	copy(cfg.GraphSeed[:], r.GraphSeed)
	if err := cfg.Validate(); err != nil {
		return secagg.Config{}, secagg.Encoding{}, fmt.Errorf("%s %d: %w", op, round, err)
	}
	return cfg, enc, nil
}

// check bounds what a round opening may announce before anyone builds a
// configuration from it.
func (r *SecAggRound) check() error {
	if len(r.Cohort) < 2 || len(r.Cohort) > MaxSecAggCohort {
		return fmt.Errorf("secure aggregation over %d parties, want 2..%d", len(r.Cohort), MaxSecAggCohort)
	}
	for _, id := range r.Cohort {
		if !ValidID(id) || id == AggregatorID {
			return fmt.Errorf("secure aggregation cohort member %q is not a bank id", id)
		}
	}
	if len(r.Stale) > maxStaleAnnounced {
		return fmt.Errorf("%d staleness weights announced, at most %d", len(r.Stale), maxStaleAnnounced)
	}
	for i, f := range r.Stale {
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("staleness weight %d is %v, want [0, 1]", i+1, f)
		}
	}
	if math.IsNaN(r.Clip) || r.Bits < 2 || r.Bits > 32 {
		return fmt.Errorf("secure aggregation clip %v, %d bits", r.Clip, r.Bits)
	}
	_, _, err := r.Protocol("check", 1)
	return err
}
