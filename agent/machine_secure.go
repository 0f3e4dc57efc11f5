package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"

	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"graphfed/privacy"

	"graphfed/bus"
	"graphfed/secagg"
)

// Secure aggregation on the agent's side (issue 31). When a round opening
// announces a secure round (bus.RoundOpen.SecAgg) whose cohort names this
// agent, the round's released parameters and gradient estimator do not go
// in the update: the agent keeps them, advertises its keys, shares its
// secrets with its neighbours once the aggregator sends the keys, masks
// its encoded input when every neighbour's share is in (or ShareWait
// later), and answers the aggregator's one signed list. The update goes
// out as usual, without vectors (bus.Update.Masked).
//
// An input that misses its round's sum (keys closed before it advertised,
// a round that closed without it) is kept and folded, weighted by the
// staleness factor the next secure round announces, into the agent's input
// to that round: the aggregator never sees it alone.

// SecAggConfig is an agent's part in secure aggregation.
type SecAggConfig struct {
	// Signer signs the agent's key advertisements (its NKey); Verifier
	// checks the other parties' advertisements and the aggregator's list
	// (the job's keyring). Without a Signer the agent cannot take part:
	// a secure round's opening is then refused (noted) and its update
	// held back.
	Signer   secagg.Signer
	Verifier secagg.Verifier
	// Rand supplies the protocol's keys, seeds and rounding; nil:
	// crypto/rand (a seeded simulation injects its own).
	Rand io.Reader
	// ShareWait is how long after the keys the agent waits for its
	// neighbours' shares before it masks with those it holds; 0: 15 s.
	ShareWait time.Duration
}

// defaultShareWait is long: a bank that masks before a neighbour's share
// arrives leaves that neighbour's input out of the sum (the mutual-peer
// rule), and on the 5M-row job with 8 banks on 2 loaded cores a 5 s wait
// cost round 5 two of its inputs. Waiting costs time only when a
// neighbour crashed while sharing.
const defaultShareWait = 15 * time.Second

// heldInput is a released update not yet in any secure sum.
type heldInput struct {
	round        uint64
	params, grad []float32
	weight       float64
}

// secureState is the agent's secure aggregation: the inputs it holds and
// the session of the round it takes part in.
type secureState struct {
	announced map[uint64]*bus.SecAggRound // openings seen, by round (the latest few)
	// own are the parameters the agent released in its latest secure
	// round (ownRound), for a personalized model it mixes itself.
	own      []float32
	ownRound uint64
	// secureJob: a round opening said the job aggregates securely; from
	// then on no round's vectors go out in the clear.
	secureJob bool
	held      []heldInput
	sess      *secureSession
	refusals  int // messages the agent's protocol refused (lists, keys, shares)
}

type secureSession struct {
	round   uint64
	ann     *bus.SecAggRound
	enc     secagg.Encoding
	cl      *secagg.Client
	words   []uint32
	folded  []uint64 // the earlier held rounds this input carries
	carries []uint64 // every held round it carries (folded and its own)
	keysIn  bool
	maskDue time.Time
	masked  bool
	early   []secagg.SealedShare
}

// SecAggIn is an aggregator's or a neighbour's secure-aggregation message,
// opened by the bus validator: *bus.SecAggKeys, *secagg.SealedShare or
// *secagg.SignedList.
type SecAggIn struct {
	Msg any
	Now time.Time
}

func (SecAggIn) isMachineEvent() {}

// PublishSecAgg sends a message of the agent's side of the protocol
// (secagg.SignedAdvertisement, SealedShare, MaskedInput, Reveal) on its
// own subject (bus.SecAggOutgoing).
type PublishSecAgg struct{ Msg any }

func (PublishSecAgg) isMachineAction() {}

// noteAnnounce remembers a round opening's secure round.
func (m *Machine) noteAnnounce(round uint64, a *bus.SecAggRound) {
	if a == nil {
		return
	}
	if m.sa.announced == nil {
		m.sa.announced = map[uint64]*bus.SecAggRound{}
	}
	m.sa.announced[round] = a
	for r := range m.sa.announced {
		if r+4 < round {
			delete(m.sa.announced, r)
		}
	}
}

// holdForSecure takes the round's released vectors out of up when the
// round aggregates securely, and reports whether it did.
func (m *Machine) holdForSecure(up *PublishUpdate) bool {
	a := m.sa.announced[up.Update.Round]
	if a == nil && !m.sa.secureJob {
		return false
	}
	h := heldInput{round: up.Update.Round, params: up.Update.Params.Floats(), grad: up.Update.Grad.Floats(), weight: up.Update.Weight}
	if up.Update.Withheld || len(h.params) == 0 {
		// Nothing released (budget spent): the agent still takes part,
		// with weight 0, so that its neighbours' masks cancel.
		h = heldInput{round: up.Update.Round, weight: 0}
	}
	up.Update.Params, up.Update.Grad, up.Update.Masked = bus.Sensitive{}, bus.Sensitive{}, true
	if a != nil && a.Unit {
		// Each input weighs one; the own parameters are kept for the
		// mixing the aggregator leaves to the client (mixOwn).
		if h.weight > 0 {
			h.weight = 1
		}
		m.sa.own, m.sa.ownRound = h.params, h.round
	}
	m.sa.held = append(m.sa.held, h)
	return true
}

// joinSecure starts this agent's part in round's secure aggregation with
// what it holds: advertise its keys.
func (m *Machine) joinSecure(round uint64, out []MachineAction) []MachineAction {
	a := m.sa.announced[round]
	if a == nil || len(m.sa.held) == 0 || (m.sa.sess != nil && m.sa.sess.round == round) {
		return out
	}
	m.sa.sess = nil // an unfinished session of an earlier round is over
	if m.cfg.SecAgg.Signer == nil || m.cfg.SecAgg.Verifier == nil {
		return append(out, Note{Warn: true, Round: round, Msg: "the round aggregates securely and this agent has no signer or keyring for it: its update is held back"})
	}
	cfg, enc, err := a.Protocol(m.cfg.Job, round)
	if err != nil {
		return append(out, Note{Warn: true, Round: round, Msg: "secure round refused: its update is held for the next", Err: err})
	}
	if cfg.Index(m.cfg.Client) < 0 {
		return append(out, Note{Round: round, Msg: "not in the round's secure cohort (joined after it opened): the update is held for the next round"})
	}
	words, folded, carries, note := m.secureInput(round, a, enc)
	if note != nil {
		out = append(out, *note)
	}
	if words == nil {
		return out
	}
	cl, err := secagg.NewClient(cfg, m.cfg.Client, m.cfg.SecAgg.Signer, m.cfg.SecAgg.Verifier, m.secRand())
	if err != nil {
		return append(out, Note{Warn: true, Round: round, Msg: "secure round: client", Err: err})
	}
	ad, err := cl.Advertise()
	if err != nil {
		return append(out, Note{Warn: true, Round: round, Msg: "secure round: advertise", Err: err})
	}
	m.sa.sess = &secureSession{round: round, ann: a, enc: enc, cl: cl, words: words, folded: folded, carries: carries}
	return append(out, PublishSecAgg{Msg: ad})
}

// secureInput encodes the held inputs as round's one input: the
// staleness-weighted mean of the held updates, with their weight.
func (m *Machine) secureInput(round uint64, a *bus.SecAggRound, enc secagg.Encoding) ([]uint32, []uint64, []uint64, *Note) {
	dim := enc.Dim
	sum := make([]float64, dim)
	var total float64
	var folded, carries []uint64
	var kept []heldInput
	for _, h := range m.sa.held {
		if h.round > round {
			kept = append(kept, h) // trained after this round's session began
			continue
		}
		f := a.StaleWeight(round - h.round)
		if f == 0 {
			continue // too late by the aggregator's policy
		}
		kept = append(kept, h)
		carries = append(carries, h.round)
		if h.round < round {
			folded = append(folded, h.round)
		}
		w := f * h.weight
		if w == 0 {
			continue
		}
		for i, v := range h.params {
			if i < dim {
				sum[i] += w * float64(v)
			}
		}
		if a.Grad {
			for i, v := range h.grad {
				if a.Params+i < dim {
					sum[a.Params+i] += w * float64(v)
				}
			}
		}
		total += w
	}
	var note *Note
	if len(kept) < len(m.sa.held) {
		note = &Note{Round: round, Msg: fmt.Sprintf("%d held update(s) too late for the staleness policy: dropped", len(m.sa.held)-len(kept))}
	}
	m.sa.held = kept
	if len(carries) == 0 {
		return nil, nil, nil, note
	}
	x := make([]float32, dim)
	if total > 0 {
		for i := range x {
			x[i] = float32(sum[i] / total)
		}
	}
	weight := uint64(math.Round(total))
	weight = min(weight, enc.MaxWeight)
	words, err := enc.Encode(x, weight, m.secRand())
	if err != nil {
		return nil, nil, nil, &Note{Warn: true, Round: round, Msg: "secure round: encode", Err: err}
	}
	return words, folded, carries, note
}

func (m *Machine) secRand() io.Reader {
	if m.cfg.SecAgg.Rand != nil {
		return m.cfg.SecAgg.Rand
	}
	return rand.Reader
}

// secureIn steps the session with the aggregator's keys or list, or a
// neighbour's share.
func (m *Machine) secureIn(ctx context.Context, e SecAggIn) []MachineAction {
	s := m.sa.sess
	var out []MachineAction
	switch x := e.Msg.(type) {
	case *bus.SecAggKeys:
		if s == nil || x.Round != s.round || s.keysIn {
			return nil
		}
		for _, ad := range x.Ads {
			if err := s.cl.AcceptKey(ad); err != nil {
				m.sa.refusals++
				out = append(out, Note{Warn: true, Round: s.round, Msg: "secure round: key advertisement of " + ad.Party + " refused", Err: err})
			}
		}
		shares, err := s.cl.ShareKeys()
		if err != nil {
			m.sa.sess = nil
			return append(out, Note{Warn: true, Round: s.round, Msg: "secure round: cannot share (its update is held for the next round)", Err: err})
		}
		s.keysIn, s.maskDue = true, e.Now.Add(m.shareWait())
		for _, sh := range shares {
			out = append(out, PublishSecAgg{Msg: sh})
		}
		early := s.early
		s.early = nil
		for _, sh := range early {
			out = m.acceptShare(s, sh, out)
		}
		return m.maybeMask(ctx, e.Now, out)
	case *secagg.SealedShare:
		switch {
		case s == nil || x.Round != s.round:
			return nil
		case !s.keysIn:
			if len(s.early) < len(s.ann.Cohort) {
				s.early = append(s.early, *x)
			}
			return nil
		}
		return m.maybeMask(ctx, e.Now, m.acceptShare(s, *x, nil))
	case *secagg.SignedList:
		if s == nil || x.Round != s.round || !s.masked {
			return nil
		}
		r, err := s.cl.Unmask(*x)
		if err != nil {
			m.sa.refusals++
			var re *secagg.RefusalError
			if errors.As(err, &re) && re.Reason == secagg.RefusedSelfDropped {
				// Listed as a dropout: its input is not in the sum, so it
				// is held for the next round.
				return []MachineAction{Note{Round: s.round, Msg: "listed as a dropout of the secure round: the update is held for the next", Err: err}}
			}
			return []MachineAction{Note{Warn: true, Round: s.round, Msg: "secure round: list refused", Err: err}}
		}
		// In the sum: what the input carried is aggregated; an update
		// trained since (held for the next round) stays.
		m.sa.held = slices.DeleteFunc(m.sa.held, func(h heldInput) bool { return slices.Contains(s.carries, h.round) })
		return []MachineAction{PublishSecAgg{Msg: r}}
	}
	return nil
}

func (m *Machine) acceptShare(s *secureSession, sh secagg.SealedShare, out []MachineAction) []MachineAction {
	if err := s.cl.AcceptShare(sh); err != nil && !errors.Is(err, secagg.ErrLate) {
		m.sa.refusals++
		return append(out, Note{Warn: true, Round: s.round, Msg: "secure round: share of " + sh.From + " refused", Err: err})
	}
	return out
}

// maybeMask masks the input once every neighbour's share is in, or at
// the share wait with those in.
func (m *Machine) maybeMask(ctx context.Context, now time.Time, out []MachineAction) []MachineAction {
	s := m.sa.sess
	if s == nil || !s.keysIn || s.masked || (s.cl.Pending() > 0 && now.Before(s.maskDue)) {
		return out
	}
	// The ledger before the wire: the bank's record of the round it
	// masks into (cohort, t, b, scale, graph) is durable first.
	if _, err := m.gate.RecordSecAgg(ctx, s.round, secureRecord(s, m.cfg.Client)); err != nil {
		m.sa.sess = nil
		return append(out, Note{Warn: true, Round: s.round, Msg: "secure round: ledger record refused (its update is held for the next round)", Err: err})
	}
	mi, err := s.cl.MaskInput(s.words)
	if err != nil {
		m.sa.sess = nil
		return append(out, Note{Warn: true, Round: s.round, Msg: "secure round: cannot mask (its update is held for the next round)", Err: err})
	}
	s.masked = true
	return append(out, PublishSecAgg{Msg: mi})
}

func (m *Machine) shareWait() time.Duration {
	if m.cfg.SecAgg.ShareWait > 0 {
		return m.cfg.SecAgg.ShareWait
	}
	return defaultShareWait
}

// secureWake is when the session wants a tick (its share wait), zero if
// it waits for nothing.
func (m *Machine) secureWake() time.Time {
	if s := m.sa.sess; s != nil && s.keysIn && !s.masked {
		return s.maskDue
	}
	return time.Time{}
}

// SecAggRefusals is how many secure-aggregation messages the agent's
// protocol refused (keys, shares, lists).
func (m *Machine) SecAggRefusals() int { return m.sa.refusals }

// mixOwn is the personalized model ρ̄·θ̄ + (1 − ρ̄)·θ_c of a secure LPSFed
// round, with θ_c the parameters this agent released for round; θ̄ alone
// when it released none (withheld), as the aggregator in the clear does.
func (m *Machine) mixOwn(round uint64, global []float32, rho float64) []float32 {
	if m.sa.ownRound != round || len(m.sa.own) != len(global) {
		return global
	}
	out := make([]float32, len(global))
	for i, g := range global {
		out[i] = float32(float64(g)*rho + float64(m.sa.own[i])*(1-rho))
	}
	return out
}

// secureRecord is the bank's ledger record of session s.
func secureRecord(s *secureSession, self string) privacy.SecAggRecord {
	cfg := s.cl.Config()
	d := cfg.Digest()
	r := privacy.SecAggRecord{Cohort: slices.Clone(cfg.Parties), Threshold: cfg.Threshold, Bits: cfg.Bits, Scale: s.enc.Scale,
		Config: hex.EncodeToString(d[:]), Stale: slices.Clone(s.folded)}
	if g, err := cfg.Graph(); err == nil {
		for _, j := range g.Neighbours(cfg.Index(self)) {
			r.Neighbours = append(r.Neighbours, cfg.Parties[j])
		}
		slices.Sort(r.Neighbours)
	}
	r.Degree = len(r.Neighbours)
	return r
}

// behind reports whether the agent holds updates of two or more rounds
// before round: it missed the sums of consecutive rounds, its training
// being slower than the rounds.
func (m *Machine) behind(round uint64) bool {
	n := 0
	for _, h := range m.sa.held {
		if h.round < round {
			n++
		}
	}
	return n >= 2
}

// catchUp is an agent that is behind (behind) at round's opening: it
// sends what it holds into round's sum at once and sits the round's
// training out, so that its advertisement is on time and its updates
// land, one round late, every other round; once one landed it trains
// again. An agent late once trains as usual and folds its late update
// into the round's input. It reports whether the agent sat out.
func (m *Machine) catchUp(round uint64, a *bus.SecAggRound, out []MachineAction) ([]MachineAction, bool) {
	if !m.joined || a == nil || !m.behind(round) || round <= m.trained {
		return out, false
	}
	out = m.joinSecure(round, out)
	if s := m.sa.sess; s == nil || s.round != round {
		return out, false
	}
	m.trained = round
	return append(out, Note{Round: round, Msg: "behind by two rounds: this round carries the held updates, and the agent trains again from the next"}), true
}
