package aggregator

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"graphfed/bus"
	"graphfed/secagg"
)

// SecAgg is the machine's secure aggregation (issue 31): each round's
// parameters and gradient estimators reach it only as the sum of a
// cohort's masked inputs (package secagg), never one party's. The
// round's other fields (weights, LPSFed's scalars, ledger heads) still
// arrive in each party's update, which then carries no vectors
// (bus.Update.Masked).
type SecAgg struct {
	On bool `json:",omitempty"`
	// Job is the job id every protocol message is bound to.
	Job string `json:",omitempty"`
	// Threshold is t, the shares that reconstruct a party's secrets;
	// 0: secagg.DefaultThreshold of each round's cohort.
	Threshold int `json:",omitempty"`
	// Degree is k of the random neighbour graph of cohorts above
	// secagg.CompleteGraphMax; 0: secagg.DefaultDegree.
	Degree int `json:",omitempty"`
	// Bits is b; 0: each round's fewest bits that keep 2^24 steps at the
	// clip without wrapping (secagg.NewEncoding: 29–31 for up to 30
	// parties), so that a masked upload stays below the float32 update's
	// size. The rounding is then about 10^-6 of a coordinate, far below
	// the release noise; the demo's test F1 moves as much under a 10^-4
	// change of σ1 as between 31 and 32 bits (README).
	Bits int `json:",omitempty"`
	// InputWait is how long the masked inputs may take after the keys go
	// out, RevealWait the reveals after the list; 0: RoundTimeout each.
	InputWait  time.Duration `json:",omitempty"`
	RevealWait time.Duration `json:",omitempty"`
	// Signer signs the survivor lists as the aggregator; Verifier checks
	// the parties' key advertisements. Injected, never serialized.
	Signer   secagg.Signer   `json:"-"`
	Verifier secagg.Verifier `json:"-"`
}

// maxStaleSecure bounds the staleness weights a round announces: under
// secure aggregation an update more rounds late than this is dropped.
const maxStaleSecure = 16

func (s SecAgg) validate(c Config) error {
	if !s.On {
		return nil
	}
	const op = "aggregator: config: secure aggregation"
	switch {
	case c.Algo == AlgoFedGSP:
		// FedGSP learns its collaboration graph W from each client's own
		// model and publishes a W-weighted sum per recipient: a secure
		// sum would need one protocol round per recipient with weights
		// the recipient's row fixes, which the single weight slot does
		// not carry.
		return fmt.Errorf("%s: fedgsp learns its collaboration graph from each client's own model, which secure aggregation hides; run it with --secagg off", op)
	case c.lpsfed() && c.Buffer > 0:
		return fmt.Errorf("%s: lpsfed mixes each client's own update of the round: no buffer", op)
	case c.Algo == AlgoLocal:
		return fmt.Errorf("%s: algo local shares nothing to sum; run it with --secagg off", op)
	case c.Robust.Rule != RobustNone:
		return fmt.Errorf("%s and the robust rule %s exclude each other: a robust rule looks at each party's update, which masking hides; choose one", op, c.Robust.Rule)
	case s.Threshold < 0 || s.Degree < 0 || s.Bits < 0 || s.Bits > 32 || s.InputWait < 0 || s.RevealWait < 0:
		return fmt.Errorf("%s: negative threshold, degree or wait, or more than 32 bits", op)
	}
	return nil
}

// ready checks what a machine needs to run secure rounds beyond the
// configuration's static checks: the job id and the identities, which a
// driver fills in once it has its keys.
func (s SecAgg) ready() error {
	if !s.On {
		return nil
	}
	switch {
	case !bus.ValidID(s.Job):
		return fmt.Errorf("aggregator: secure aggregation: job id %q", s.Job)
	case s.Signer == nil || s.Verifier == nil:
		return fmt.Errorf("aggregator: secure aggregation needs the aggregator's signer and the job's keyring")
	}
	return nil
}

// secureOn reports whether rounds aggregate securely.
func (m *Machine) secureOn() bool { return m.cfg.SecAgg.On }

// announceSecure fixes the secure round of round r: the live clients are
// its cohort, and the contract and their declared sizes its encoding.
// An error leaves the round without a secure sum: it closes without a
// model, and says why.
func (m *Machine) announceSecure(r uint64) (*bus.SecAggRound, error) {
	cohort := m.liveClients()
	if m.cfg.Contract.Clip <= 0 {
		return nil, fmt.Errorf("secure aggregation needs the job's model clip (the contract's) to size its fixed point")
	}
	if len(cohort) < 2 {
		return nil, fmt.Errorf("secure aggregation needs 2 live parties, round %d has %d", r, len(cohort))
	}
	k := m.cfg.Contract
	grad := m.takesGrad()
	clip := k.MaxNorm(k.Sigma, m.numParams)
	if grad {
		g := k.MaxNorm(k.GradSigma, m.numParams)
		clip = math.Sqrt(clip*clip + g*g)
	}
	// Twice the largest declared size: an agent whose update missed its
	// round folds it into its next input, so an input may weigh up to two
	// updates.
	var maxW float64
	for _, id := range cohort {
		maxW = max(maxW, m.clients[id].weight)
	}
	t := m.cfg.SecAgg.Threshold
	if t == 0 {
		t = secagg.DefaultThreshold(len(cohort), m.cfg.SecAgg.Degree)
	}
	a := &bus.SecAggRound{Cohort: cohort, Threshold: t, Degree: m.cfg.SecAgg.Degree, GraphSeed: graphSeed(m.cfg.SecAgg.Job, r, cohort),
		Bits: m.cfg.SecAgg.Bits, Clip: clip, MaxWeight: uint64(math.Ceil(2 * max(maxW, 1))), Params: m.numParams, Grad: grad}
	if m.cfg.lpsfed() {
		a.Unit, a.MaxWeight = true, 2
	}
	if a.Bits == 0 {
		enc, err := secagg.NewEncoding(a.Clip, a.MaxWeight, len(cohort), a.Dim(), 0)
		if err != nil {
			return nil, fmt.Errorf("secure aggregation: round %d's fixed point: %w", r, err)
		}
		a.Bits = enc.Bits
	}
	if m.strategy.FoldsLate() {
		for late := uint64(1); late <= min(maxStaleSecure, m.maxStaleness()); late++ {
			a.Stale = append(a.Stale, m.cfg.Staleness.Weight(late))
		}
	}
	_, enc, err := a.Protocol(m.cfg.SecAgg.Job, r)
	if err != nil {
		return nil, err
	}
	a.Bits = enc.Bits // what the encoding chose, stated to every party
	return a, nil
}

// graphSeed seeds the neighbour graph of round r from the job, the round
// and the cohort. The aggregator chooses the graph in SecAgg+ as well;
// deriving it in the open makes the choice checkable by every party.
func graphSeed(job string, r uint64, cohort []string) []byte {
	h := sha256.New()
	h.Write([]byte("graphfed secagg graph v1\x00" + job + "\x00"))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], r)
	h.Write(b[:])
	for _, id := range cohort {
		h.Write([]byte(id + "\x00"))
	}
	return h.Sum(nil)
}

// SecureClose is what a secure round's close says (RoundClosed.SecAgg):
// the protocol's parameters, who is in the sum and who dropped out, and
// why a round closed without one.
type SecureClose struct {
	Cohort    int      `json:"cohort"`
	Threshold int      `json:"t"`
	Bits      int      `json:"bits"`
	Scale     float64  `json:"scale"`
	Degree    int      `json:"degree"` // neighbours of each party (n − 1: everyone)
	Survivors []string `json:"survivors,omitempty"`
	Dropouts  []string `json:"dropouts,omitempty"`
	// Failure says why the round has no sum (below t, an implausible
	// sum, a secure round lost with a restart); empty when it has one.
	Failure string `json:"failure,omitempty"`
	// Seconds is the aggregator's time in the protocol's steps this
	// round (keys, list, unmasking and decoding), measured by the driver
	// around the machine's secure-aggregation steps; 0 from the machine.
	Seconds float64 `json:"seconds"`
}

// SecAggIn is a party's secure-aggregation message, opened by the bus
// validator: a *secagg.SignedAdvertisement, *secagg.MaskedInput or
// *secagg.Reveal.
type SecAggIn struct {
	Client string
	Msg    any
	Now    time.Time
}

func (SecAggIn) isEvent() {}

// SecAggOut is a message of the aggregator's side of the protocol to
// publish: bus.SecAggKeys or secagg.SignedList.
type SecAggOut struct{ Msg any }

func (SecAggOut) isAction() {}

// SecAggRefused records a party's protocol message the round's
// secagg.Server refused (a forged key, a second input, a reveal it may
// not send, a message of a round not open): the driver logs and counts it.
type SecAggRefused struct {
	Client string
	Round  uint64
	Kind   string // adv, masked, reveal
	Err    error
}

func (SecAggRefused) isAction() {}

// refusedKind is the short kind of a refused message.
func refusedKind(msg any) (string, uint64) {
	switch x := msg.(type) {
	case *secagg.SignedAdvertisement:
		return "adv", x.Round
	case *secagg.MaskedInput:
		return "masked", x.Round
	case *secagg.Reveal:
		return "reveal", x.Round
	}
	return fmt.Sprintf("%T", msg), 0
}

// IsLate reports whether a refusal is only lateness (the party's update
// goes into the next round), not a fault.
func (r SecAggRefused) IsLate() bool { return errors.Is(r.Err, secagg.ErrLate) }
