package privacy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The audit recomputes every ε from ledger entries alone, with a fresh
// Accountant: per client channel, per client (the composition its budget
// caps), per node at each calibrated distance ρ_q, and all of them against
// rounds.
//
// Where ρ comes from: Gate.RecordCalibration writes the distances measured
// by Calibrate into the ledger as ChannelCalibration entries. The audit
// takes the latest calibration of each client (highest Seq) and evaluates
// each node at its own client's ρ_q: the distance was measured among that
// client's released embeddings, and it is the distance the client's gate
// held a node budget at (Budget.NodeQ). Nodes of a client without a
// calibration are evaluated at the largest ρ_q over clients, which is
// also the distance the report lists per percentile. AuditOptions.Rho
// overrides them all with one distance per percentile (for example to
// evaluate the paper's ρ values).

// RhoAt is the metric-DP distance ρ at percentile Q.
type RhoAt struct {
	Q, Rho float64
}

// AuditOptions configure Audit.
type AuditOptions struct {
	Kind  AccountantKind // zero: RDP
	Delta float64        // required, in (0, 1)
	Job   string         // only this job; "" = every job in the entries
	Rho   []RhoAt        // overrides the ledger's calibrations when set
	// ExpectHeads, when set, are the final ledger heads known from outside
	// the ledger (the aggregator's report, ParseHeads): AuditReading checks
	// every chain reaches them, which catches a ledger cut back
	// consistently, the aggregator's records included. Nil: none given.
	ExpectHeads []Head
}

// Report is the outcome of an audit.
type Report struct {
	Kind     AccountantKind
	Delta    float64
	Entries  int // the banks' entries considered (after the job filter)
	Releases int // of which releases
	// Records counts the aggregator's records (round and done), which
	// release nothing and are not among Entries.
	Records int
	Seeded  bool // some release used a fixed seed: no privacy claim holds
	// RhoSource says where the node distances came from: "given",
	// "ledger calibration" (each client's nodes at its own ρ) or "none".
	RhoSource    string
	Calibrations []CalibrationRecord // the latest per client
	Channels     []ChannelEpsilon    // per client channel
	ChannelMax   map[Channel]float64 // per channel, the worst client
	Clients      []ClientEpsilon     // per client, model+grad+margin+descriptor composed
	// Descriptors lists every descriptor release (FedGSP's spectral
	// descriptors, sent once per client), in ledger order.
	Descriptors []DescriptorRelease
	Nodes       int                 // distinct released nodes
	Percentiles []PercentileEpsilon // per-node ε at each ρ_q
	Rounds      []RoundEpsilon      // cumulative ε after each round
	// SecureAggregation is what the banks' secagg records say the
	// aggregator saw of their model and grad releases (audit_secagg.go);
	// zero without records. It changes no ε.
	SecureAggregation SecureAggregation
	// Integrity is what verifying the ledger found (AuditReading); zero
	// for Audit over entries already trusted.
	Integrity Integrity
}

// CalibrationRecord is a calibration entry's origin and content.
type CalibrationRecord struct {
	Job, Client string
	Seq, Round  uint64
	Calibration Calibration
}

// DescriptorRelease is one descriptor release as the ledger records it,
// with the ε of that release alone.
type DescriptorRelease struct {
	Job, Client string
	Seq, Round  uint64
	Rows, Dim   int
	Sigma, Clip float64
	Sensitivity float64 // Entry.Rho: 2·clip·sqrt(rows)
	Epsilon     float64
	Seeded      bool
}

// ChannelEpsilon is the ε of one client's channel.
type ChannelEpsilon struct {
	Job, Client string
	Channel     Channel
	Releases    uint64
	Epsilon     float64
}

// ClientEpsilon is the ε of a client's model, grad, margin and descriptor releases
// composed.
type ClientEpsilon struct {
	Job, Client string
	Releases    uint64
	Epsilon     float64
}

// PercentileEpsilon is the per-node ε at distance Rho (percentile Q): of
// the node with the most embedding privacy loss and of the median node.
type PercentileEpsilon struct {
	Q, Rho        float64
	WorstEpsilon  float64
	MedianEpsilon float64
	WorstReleases uint64 // releases of the worst node
}

// RoundEpsilon is the cumulative ε after every entry of rounds ≤ Round:
// per channel for its worst client, and per node at each percentile (same
// order as Report.Percentiles) for the worst node.
type RoundEpsilon struct {
	Round    uint64
	Channels map[Channel]float64
	Nodes    []float64
}

// AuditReading audits a verified ledger (ReadLedger): the ε figures come
// from the accepted entries, and the report carries what was skipped and
// flagged, with what it means for the claim (Integrity).
func AuditReading(rd Reading, opt AuditOptions) (Report, error) {
	rep, err := Audit(rd.Entries, opt)
	if err != nil {
		return Report{}, err
	}
	rep.Integrity = newIntegrity(rd, opt.Job)
	rep.Integrity.Completeness = checkCompleteness(rd, opt.Job, opt.ExpectHeads)
	rep.Integrity.settle()
	return rep, nil
}

// Audit recomputes the report from entries (in ledger order). It fails on
// invalid entries or out-of-order sequence numbers (ErrCorrupt) and on bad
// options (ErrInvalid).
func Audit(entries []Entry, opt AuditOptions) (Report, error) {
	const op = "audit"
	if opt.Kind == 0 {
		opt.Kind = RDP
	}
	for _, r := range opt.Rho {
		if !(r.Q > 0 && r.Q <= 100 && r.Rho >= 0 && r.Rho <= 2) {
			return Report{}, errorf(op, ErrInvalid, fmt.Sprintf("distance %v at percentile %v", r.Rho, r.Q))
		}
	}
	acct, err := NewAccountant(opt.Kind, opt.Delta, Budget{})
	if err != nil {
		return Report{}, err
	}
	rep := Report{Kind: opt.Kind, Delta: opt.Delta, ChannelMax: map[Channel]float64{}}
	var kept []Entry
	seqs := seqTracker{}
	latest := map[ClientKey]CalibrationRecord{}
	for _, e := range entries {
		if opt.Job != "" && e.Job != opt.Job {
			continue
		}
		if err := seqs.check(&e, op); err != nil {
			return Report{}, wrapErr(op, ErrCorrupt, "", err)
		}
		seqs.note(&e)
		if e.Channel.record() {
			// The aggregator's records are the ledger's account of itself
			// (completeness.go), not releases: no ε, no round of their own.
			rep.Records++
			continue
		}
		kept = append(kept, e)
		if e.Channel == ChannelSecAgg {
			continue // no release: what the aggregator saw, not what it got
		}
		if e.Channel == ChannelCalibration {
			latest[ClientKey{e.Job, e.Client}] = CalibrationRecord{e.Job, e.Client, e.Seq, e.Round, *e.clone().Calibration}
			continue
		}
		rep.Releases++
		rep.Seeded = rep.Seeded || e.Seeded
		if e.Channel == ChannelDescriptor {
			rep.Descriptors = append(rep.Descriptors, DescriptorRelease{Job: e.Job, Client: e.Client, Seq: e.Seq, Round: e.Round,
				Rows: e.Count, Dim: e.Dim, Sigma: e.Sigma, Clip: e.Clip, Sensitivity: e.Rho,
				Epsilon: acct.Epsilon(Stat{Mu2: sq(e.Rho / e.Sigma), Releases: 1}, 1), Seeded: e.Seeded})
		}
	}
	rep.Entries = len(kept)
	rep.SecureAggregation = secureAccount(kept)
	for _, c := range latest {
		rep.Calibrations = append(rep.Calibrations, c)
	}
	slices.SortFunc(rep.Calibrations, func(a, b CalibrationRecord) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Client, b.Client))
	})
	rho := opt.Rho
	var own clientRho
	switch {
	case rho != nil:
		rep.RhoSource = "given"
	case len(rep.Calibrations) > 0:
		rep.RhoSource = "ledger calibration"
		rho = jobRho(rep.Calibrations)
		own = ownRho(rep.Calibrations)
	default:
		rep.RhoSource = "none"
	}

	// Replay round by round, in ledger order within a round.
	slices.SortStableFunc(kept, func(a, b Entry) int { return cmp.Compare(a.Round, b.Round) })
	for i := 0; i < len(kept); {
		r := kept[i].Round
		for ; i < len(kept) && kept[i].Round == r; i++ {
			if err := acct.Apply(kept[i]); err != nil {
				return Report{}, wrapErr(op, ErrCorrupt, "", err)
			}
		}
		rep.Rounds = append(rep.Rounds, roundSnapshot(acct, r, rho, own))
	}

	for _, c := range acct.ChannelStats() {
		eps := acct.Epsilon(c.Stat, 1)
		rep.Channels = append(rep.Channels, ChannelEpsilon{c.Key.Job, c.Key.Client, c.Key.Channel, c.Releases, eps})
		rep.ChannelMax[c.Key.Channel] = math.Max(rep.ChannelMax[c.Key.Channel], eps)
	}
	for _, c := range acct.ClientStats() {
		rep.Clients = append(rep.Clients, ClientEpsilon{c.Key.Job, c.Key.Client, c.Releases, acct.Epsilon(c.Stat, 1)})
	}
	rep.Nodes = len(acct.nodes)
	for _, r := range rho {
		p := PercentileEpsilon{Q: r.Q, Rho: r.Rho}
		if rep.Nodes > 0 {
			scaled := make([]float64, 0, rep.Nodes)
			var worst Stat
			worstMu2 := -1.0
			for k, st := range acct.nodes {
				m := st.Mu2 * sq(own.at(ClientKey{k.Job, k.Client}, r))
				scaled = append(scaled, m)
				if m > worstMu2 {
					worstMu2, worst = m, st
				}
			}
			slices.Sort(scaled)
			p.WorstEpsilon = acct.Epsilon(Stat{Mu2: worstMu2}, 1)
			p.MedianEpsilon = acct.Epsilon(Stat{Mu2: Percentile(scaled, 50)}, 1)
			p.WorstReleases = worst.Releases
		}
		rep.Percentiles = append(rep.Percentiles, p)
	}
	return rep, nil
}

func sq(x float64) float64 { return x * x }

// clientRho is each client's calibrated distance per percentile.
type clientRho map[ClientKey]map[float64]float64

// ownRho is the latest calibration's distances of each client.
func ownRho(cals []CalibrationRecord) clientRho {
	out := clientRho{}
	for _, c := range cals {
		m := map[float64]float64{}
		for i, q := range c.Calibration.Q {
			m[q] = c.Calibration.Rho[i]
		}
		out[ClientKey{c.Job, c.Client}] = m
	}
	return out
}

// at is the distance client k's nodes are evaluated at for percentile
// r.Q: its own calibration's, else the job-wide r.Rho.
func (c clientRho) at(k ClientKey, r RhoAt) float64 {
	if rho, ok := c[k][r.Q]; ok {
		return rho
	}
	return r.Rho
}

// jobRho is, per percentile, the largest distance over the clients'
// calibrations, in ascending order of percentile.
func jobRho(cals []CalibrationRecord) []RhoAt {
	m := map[float64]float64{}
	for _, c := range cals {
		for i, q := range c.Calibration.Q {
			m[q] = math.Max(m[q], c.Calibration.Rho[i])
		}
	}
	out := make([]RhoAt, 0, len(m))
	for q, r := range m {
		out = append(out, RhoAt{q, r})
	}
	slices.SortFunc(out, func(a, b RhoAt) int { return cmp.Compare(a.Q, b.Q) })
	return out
}

func roundSnapshot(acct *Accountant, round uint64, rho []RhoAt, own clientRho) RoundEpsilon {
	s := RoundEpsilon{Round: round, Channels: map[Channel]float64{}}
	worst := map[Channel]Stat{}
	for _, c := range acct.ChannelStats() {
		if c.Mu2 >= worst[c.Key.Channel].Mu2 {
			worst[c.Key.Channel] = c.Stat
		}
	}
	for ch, st := range worst {
		s.Channels[ch] = acct.Epsilon(st, 1)
	}
	if _, st, ok := acct.WorstNode(); ok {
		for _, r := range rho {
			if own == nil {
				s.Nodes = append(s.Nodes, acct.Epsilon(st, r.Rho))
				continue
			}
			worst := 0.0
			for k, st := range acct.nodes {
				worst = math.Max(worst, st.Mu2*sq(own.at(ClientKey{k.Job, k.Client}, r)))
			}
			s.Nodes = append(s.Nodes, acct.Epsilon(Stat{Mu2: worst}, 1))
		}
	}
	return s
}
