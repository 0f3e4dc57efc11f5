package privacy

import (
	"context"
	"slices"
)

// Secure aggregation changes what the aggregator sees of a bank's update,
// not what the update releases: the masked input is the bank's released
// (noised) parameters and estimator, so its ε is charged by the release
// as before. What the ledger adds is the bank's own statement, before its
// masked input goes out, of the round it went into: the cohort, the
// threshold, the fixed-point encoding and its neighbours in the masking
// graph. From those records alone an audit says which rounds' updates the
// aggregator saw only in a sum, and of how many banks (audit_secagg.go).
// The records release nothing and spend no budget.

// Bounds of a secure-aggregation record, far above any job's honest
// records: they keep one record (about 130 bytes a cohort member, twice
// for a full neighbour list) well inside a ledger message.
const (
	// MaxSecAggCohort is the largest cohort a record may list.
	MaxSecAggCohort = 1024
	// MaxSecAggStale is the most earlier rounds one input may fold in
	// (bus's announced staleness weights are bounded alike).
	MaxSecAggStale = 256
)

// SecAggRecord is a bank's record of one round of secure aggregation.
type SecAggRecord struct {
	Cohort     []string `json:"cohort"` // the round's parties, sorted
	Threshold  int      `json:"t"`
	Bits       int      `json:"bits"`
	Scale      float64  `json:"scale"`
	Degree     int      `json:"degree"`          // neighbours per party (n−1: everyone)
	Neighbours []string `json:"neighbours"`      // this bank's neighbours, sorted
	Config     string   `json:"config"`          // hex SHA-256 digest of the round's secagg.Config
	Stale      []uint64 `json:"stale,omitempty"` // earlier rounds whose update this input folds in
}

func (r SecAggRecord) clone() SecAggRecord {
	r.Cohort = slices.Clone(r.Cohort)
	r.Neighbours = slices.Clone(r.Neighbours)
	r.Stale = slices.Clone(r.Stale)
	return r
}

// validateSecAgg checks a bank's secure-aggregation record: the record and
// nothing of a release. Called by Validate for ChannelSecAgg.
func (e *Entry) validateSecAgg(bad func(string, ...any) error) error {
	switch {
	case e.SecAgg == nil:
		return bad("secagg entry without its record")
	case e.Count != 0 || e.Dim != 0 || e.Sigma != 0 || e.Clip != 0 || e.Rho != 0 || e.NodeIDs != nil:
		return bad("secagg entry with release fields (count %d dim %d sigma %v clip %v rho %v)", e.Count, e.Dim, e.Sigma, e.Clip, e.Rho)
	case e.Calibration != nil:
		return bad("calibration on a secagg entry")
	}
	return e.SecAgg.validate(e.Client, e.Round, bad)
}

// validate checks the record of bank's input to round. The rules are the
// structure any round of secagg.Config has (sorted unique cohort holding
// the bank, a neighbourhood of Degree+1 parties and 2 ≤ t within it); the
// protocol's own policy (2t above the neighbourhood, the degree of the
// random graph) is secagg's to enforce, so that a ledger stays readable
// when that policy changes.
func (r *SecAggRecord) validate(bank string, round uint64, bad func(string, ...any) error) error {
	n := len(r.Cohort)
	switch {
	case n < 2 || n > MaxSecAggCohort:
		return bad("secagg cohort of %d parties, want 2..%d", n, MaxSecAggCohort)
	case r.Degree < 1 || r.Degree > n-1:
		return bad("secagg degree %d in a cohort of %d, want 1..%d", r.Degree, n, n-1)
	case r.Threshold < 2 || r.Threshold > r.Degree+1:
		return bad("secagg threshold t = %d with neighbourhoods of %d parties, want 2..%d", r.Threshold, r.Degree+1, r.Degree+1)
	case r.Bits < 1 || r.Bits > 32:
		return bad("secagg b = %d bits, want 1..32", r.Bits)
	case !finitePos(r.Scale):
		return bad("secagg scale %v must be positive and finite", r.Scale)
	case !validDigest(r.Config):
		return bad("secagg config %q is not a hex SHA-256 digest", r.Config)
	case len(r.Neighbours) != r.Degree:
		return bad("%d secagg neighbours for degree %d", len(r.Neighbours), r.Degree)
	case r.Stale != nil && (len(r.Stale) == 0 || len(r.Stale) > MaxSecAggStale):
		return bad("%d stale rounds folded in, want 1..%d (or none listed)", len(r.Stale), MaxSecAggStale)
	}
	if err := sortedBanks("cohort", r.Cohort, bad); err != nil {
		return err
	}
	if err := sortedBanks("neighbours", r.Neighbours, bad); err != nil {
		return err
	}
	if _, ok := slices.BinarySearch(r.Cohort, bank); !ok {
		return bad("secagg cohort without the recording bank %s", bank)
	}
	for _, p := range r.Neighbours {
		if p == bank {
			return bad("bank %s lists itself as its secagg neighbour", bank)
		}
		if _, ok := slices.BinarySearch(r.Cohort, p); !ok {
			return bad("secagg neighbour %s is not in the cohort", p)
		}
	}
	for i, s := range r.Stale {
		switch {
		case s >= round:
			return bad("stale round %d folded into round %d: not an earlier round", s, round)
		case i > 0 && r.Stale[i-1] >= s:
			return bad("stale rounds not ascending, or round %d listed twice", s)
		}
	}
	return nil
}

// sortedBanks checks a list of bank ids: each a valid id and not the
// aggregator's, strictly ascending.
func sortedBanks(what string, ids []string, bad func(string, ...any) error) error {
	for i, p := range ids {
		switch {
		case !validID(p) || p == AggregatorClient:
			return bad("secagg %s member %q: not a bank id", what, p)
		case i > 0 && ids[i-1] >= p:
			return bad("secagg %s not sorted, or %s listed twice", what, p)
		}
	}
	return nil
}

// RecordSecAgg appends the bank's record of round's secure aggregation before its masked input goes out. It spends no budget.
//
// The record is sealed, chained, signed and anchored as every entry of
// the gate, durably, before it returns; a failed append leaves it pending,
// to be repeated before the gate's next entry. A refusal because the chain
// has moved on is settled as in Release: the client's own secagg record of
// the round already in the ledger (an earlier life's append, stored after
// this gate read its chain) is ErrAlreadyReleased and nothing is appended;
// its own entry of an earlier round is accounted and the record is made
// after it. r is copied; an empty Stale is recorded as none.
func (g *Gate) RecordSecAgg(ctx context.Context, round uint64, r SecAggRecord) (Entry, error) {
	r = r.clone()
	if len(r.Stale) == 0 {
		r.Stale = nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.appendRecord(ctx, "record secagg", func(seq uint64) Entry {
		return Entry{
			Seq: seq, Job: g.cfg.Job, Client: g.cfg.Client, Channel: ChannelSecAgg, Round: round,
			Time: g.clock().UTC(), Seeded: g.cfg.Seed != nil, SecAgg: &r, Anchor: g.anchorCopy(),
		}.clone()
	})
}
