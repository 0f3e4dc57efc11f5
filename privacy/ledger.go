package privacy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Ledger stores one entry per release, append-only. Append must make the
// entry durable before it returns: the gate publishes nothing until then.
// It refuses an entry whose sequence number is not above its client's last
// stored one with an error wrapping ErrInvalid and ErrChainMoved (an exact
// repeat of the last stored entry may succeed instead, as a retry).
// Records returns what the ledger holds, in ledger order, undecoded and
// untrusted: readers judge it with Verify (ReadLedger), so that nothing
// stored there, by anyone, can stop them; only a failure to read is an
// error. Entries is ReadLedger without a keyring: the entries a reader
// accepts, what it skips left out (ReadLedger reports it).
// Implementations: FileLedger (fsynced JSON lines), MemLedger (in-memory
// double), and the bus package's JetStream stream.
type Ledger interface {
	Append(ctx context.Context, e Entry) error
	Records(ctx context.Context) ([]Record, error)
	Entries(ctx context.Context) ([]Entry, error)
}

// Entry is the ledger record of one release (or, with Channel
// ChannelCalibration, of one measurement of the metric-DP distances; with
// ChannelSecAgg, of one round of secure aggregation).
// Everything an audit needs is here; in particular the accountant state is
// a pure function of the entries.
type Entry struct {
	Seq     uint64  `json:"seq"`                // per (Job, Client), from 1, assigned by the gate
	Job     string  `json:"job"`                // [a-z0-9-]{1,64}
	Client  string  `json:"client"`             // [a-z0-9-]{1,64}
	Channel Channel `json:"channel"`            // model, grad, margin, descriptor, emb, calibration, secagg, round or done
	Round   uint64  `json:"round"`              // the training round of the release
	NodeIDs []int64 `json:"node_ids,omitempty"` // emb: one id per row; optional elsewhere
	Count   int     `json:"count"`              // rows released
	Dim     int     `json:"dim"`                // values per row
	Sigma   float64 `json:"sigma"`              // noise standard deviation per coordinate
	Clip    float64 `json:"clip"`               // L2 clip norm per row (1 for embeddings)
	// Rho is the sensitivity of a model, grad or margin release,
	// Sensitivity(Channel, Clip, Count); 0 for embeddings, whose distance
	// is set at audit time.
	Rho    float64   `json:"rho"`
	Time   time.Time `json:"time"`
	Seeded bool      `json:"seeded"` // noise from a fixed seed: not private
	// Calibration is set exactly when Channel is ChannelCalibration.
	Calibration *Calibration `json:"calibration,omitempty"`
	// SecAgg is set exactly when Channel is ChannelSecAgg. Nil elsewhere,
	// so it is absent from their encoding and digest: entries written
	// before it existed keep theirs.
	SecAgg *SecAggRecord `json:"secagg,omitempty"`
	// Heads is set exactly on the aggregator's records (ChannelRound,
	// ChannelDone): the ledger head each bank had reported, sorted by
	// client (records.go).
	Heads []Head `json:"heads,omitempty"`
	// Anchor, on a bank's entry, names the aggregator's latest record the
	// bank had received when it made the entry (from the round opening,
	// the hello reply or done): the bank's countersignature of the
	// aggregator's chain. Nil when it had none (a plain run without
	// records, or a ledger of an earlier graphfed).
	Anchor *Ref `json:"anchor,omitempty"`
	// Prev is the hex Digest of the client's previous entry, "" for its
	// first: the hash chain (chain.go).
	Prev string `json:"prev,omitempty"`
	// Sig is the client's signature over Digest; nil when the party has
	// no key (a plain simulation).
	Sig []byte `json:"sig,omitempty"`
}

// Calibration records the metric-DP distances of one client's released
// embeddings: Rho[i] is the Q[i]-th percentile of the distance of each
// embedding to its K-th nearest neighbour among the N L2-normalized
// embeddings. Sampled > 0 says the percentiles were estimated from that many
// query points (each with its exact K-th neighbour distance); 0 means exact.
type Calibration struct {
	K       int       `json:"k"`
	N       int       `json:"n"`
	Sampled int       `json:"sampled"`
	Q       []float64 `json:"q"`
	Rho     []float64 `json:"rho"`
}

// validID reports whether s matches [a-z0-9-]{1,64}, the rule for job and
// client ids (they become NATS subject tokens).
func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validDigest reports whether s is 64 lowercase hex digits.
func validDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func finitePos(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// Validate checks an entry's internal consistency. The accountant and the
// ledger readers refuse entries that fail it.
func (e *Entry) Validate() error {
	bad := func(format string, args ...any) error {
		return errorf("validate entry", ErrInvalid, fmt.Sprintf("seq %d: ", e.Seq)+fmt.Sprintf(format, args...))
	}
	switch {
	case e.Seq == 0:
		return bad("seq must start at 1")
	case !validID(e.Job):
		return bad("job %q does not match [a-z0-9-]{1,64}", e.Job)
	case !validID(e.Client):
		return bad("client %q does not match [a-z0-9-]{1,64}", e.Client)
	case !e.Channel.valid():
		return bad("unknown channel %q", e.Channel)
	case e.Prev != "" && !validDigest(e.Prev):
		return bad("prev %q is not a hex SHA-256 digest", e.Prev)
	case e.Seq == 1 && e.Prev != "":
		return bad("the first entry links to a previous one")
	case e.Channel.record() != (e.Client == AggregatorClient):
		return bad("a %s entry of client %s: the aggregator's records are its only entries, and only it writes them", e.Channel, e.Client)
	}
	if e.Channel.record() {
		return e.validateRecord(bad)
	}
	if e.Heads != nil {
		return bad("heads on a %s entry", e.Channel)
	}
	if e.Anchor != nil && !e.Anchor.Valid() {
		return bad("anchor %s is not an entry's seq and hex SHA-256 digest", e.Anchor)
	}
	if e.Channel == ChannelSecAgg {
		return e.validateSecAgg(bad)
	}
	if e.SecAgg != nil {
		return bad("secagg record on a %s entry", e.Channel)
	}
	if e.Channel == ChannelCalibration {
		if e.Calibration == nil {
			return bad("calibration entry without calibration")
		}
		return e.Calibration.validate(bad)
	}
	switch {
	case e.Calibration != nil:
		return bad("calibration on a %s entry", e.Channel)
	case e.Count < 1 || e.Dim < 1:
		return bad("count %d and dim %d must be positive", e.Count, e.Dim)
	case !finitePos(e.Sigma):
		return bad("sigma %v must be positive and finite", e.Sigma)
	case !finitePos(e.Clip):
		return bad("clip %v must be positive and finite", e.Clip)
	case e.NodeIDs != nil && len(e.NodeIDs) != e.Count:
		return bad("%d node ids for %d rows", len(e.NodeIDs), e.Count)
	}
	if e.Channel == ChannelEmb {
		if e.NodeIDs == nil {
			return bad("emb entry without node ids")
		}
		if e.Rho != 0 {
			return bad("emb entry with rho %v (set at audit time)", e.Rho)
		}
		if e.Clip != 1 {
			return bad("emb entry with clip %v (embeddings are on the unit sphere)", e.Clip)
		}
		seen := make(map[int64]struct{}, len(e.NodeIDs))
		for _, id := range e.NodeIDs {
			if _, dup := seen[id]; dup {
				return bad("node %d released twice in one entry", id)
			}
			seen[id] = struct{}{}
		}
		return nil
	}
	if min := Sensitivity(e.Channel, e.Clip, e.Count); !(e.Rho >= min*(1-1e-12)) || math.IsInf(e.Rho, 1) {
		return bad("rho %v below the sensitivity %v of %d rows clipped to %v", e.Rho, min, e.Count, e.Clip)
	}
	return nil
}

func (c *Calibration) validate(bad func(string, ...any) error) error {
	switch {
	case c.K < 1 || c.N < 0 || c.Sampled < 0:
		return bad("calibration k %d n %d sampled %d", c.K, c.N, c.Sampled)
	case len(c.Q) == 0 || len(c.Q) != len(c.Rho):
		return bad("calibration with %d percentiles and %d distances", len(c.Q), len(c.Rho))
	}
	for i, q := range c.Q {
		if !(q > 0 && q <= 100) {
			return bad("calibration percentile %v outside (0, 100]", q)
		}
		if r := c.Rho[i]; !(r >= 0 && r <= 2) {
			return bad("calibration distance %v outside [0, 2]", r)
		}
	}
	return nil
}

// clone deep-copies an entry so that stored entries never alias a caller's
// slices.
func (e Entry) clone() Entry {
	e.NodeIDs = slices.Clone(e.NodeIDs)
	e.Sig = slices.Clone(e.Sig)
	e.Heads = slices.Clone(e.Heads)
	if e.Anchor != nil {
		a := *e.Anchor
		e.Anchor = &a
	}
	if e.Calibration != nil {
		c := *e.Calibration
		c.Q = slices.Clone(c.Q)
		c.Rho = slices.Clone(c.Rho)
		e.Calibration = &c
	}
	if e.SecAgg != nil {
		r := e.SecAgg.clone()
		e.SecAgg = &r
	}
	return e
}
