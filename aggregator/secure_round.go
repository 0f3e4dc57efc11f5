package aggregator

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"graphfed/bus"
	"graphfed/secagg"
)

// The open round's secure aggregation, as the machine drives it. A secure
// round goes through three stages before it closes:
//
//	keys    advertisements come in with the parties' updates; the keys
//	        close when the round would have closed in the clear (the
//	        quorum of live cohort members, a FedBuff buffer, the
//	        deadline), and go out to the cohort (SecAggOut: bus.SecAggKeys)
//	inputs  masked inputs come in; the stage closes when every party in
//	        the keys has sent one, or InputWait after the keys, with the
//	        one signed list of survivors and dropouts (SecAggOut)
//	unmask  reveals come in; once t shares are in for every secret the
//	        list asks for, the sum is unmasked, decoded and checked, and
//	        the round closes with it; RevealWait after the list it closes
//	        without one, naming what is missing
//
// Everything the machine learns of the round's vectors is the sum: the
// strategy gets the survivors' weighted mean (CloseInput.Sum).

type secureStage int

const (
	stageKeys secureStage = iota
	stageInputs
	stageUnmask
)

type secureRound struct {
	round    uint64
	announce *bus.SecAggRound
	enc      secagg.Encoding
	srv      *secagg.Server
	stage    secureStage
	keys     []string // parties whose keys went out
	masked   map[string]bool
	ads      int
	reason   string // what closed the keys: quorum, buffer, deadline
	due      time.Time
	sum      *Contribution
	failure  string
}

// openSecure starts round r's secure aggregation; an error is noted and
// the round closes without a model.
func (m *Machine) openSecure(r uint64) (*secureRound, error) {
	a, err := m.announceSecure(r)
	if err != nil {
		return nil, err
	}
	cfg, enc, err := a.Protocol(m.cfg.SecAgg.Job, r)
	if err != nil {
		return nil, err
	}
	srv, err := secagg.NewServer(cfg, m.cfg.SecAgg.Signer, m.cfg.SecAgg.Verifier)
	if err != nil {
		return nil, err
	}
	return &secureRound{round: r, announce: a, enc: enc, srv: srv, masked: map[string]bool{}}, nil
}

// secure is the open round's secure aggregation, nil when it has none.
func (m *Machine) secure() *secureRound {
	if s := m.sec; s != nil && m.open && s.round == m.round {
		return s
	}
	return nil
}

// secureIn steps the open round's protocol with a party's message.
func (m *Machine) secureIn(e SecAggIn, out []Action) []Action {
	kind, round := refusedKind(e.Msg)
	s := m.secure()
	if _, ok := e.Msg.(*secagg.Reveal); ok && round < m.round+1 && (s == nil || round != s.round) {
		// A survivor's reveal after the sum was unmasked with t others':
		// no fault, nothing to do.
		return out
	}
	if s == nil || round != s.round {
		return append(out, SecAggRefused{Client: e.Client, Round: round, Kind: kind,
			Err: fmt.Errorf("%w: no secure round %d is open (the open round is %d)", secagg.ErrLate, round, m.round)})
	}
	if _, ok := m.clients[e.Client]; !ok {
		return append(out, SecAggRefused{Client: e.Client, Round: round, Kind: kind, Err: errors.New("unknown client")})
	}
	var err error
	switch x := e.Msg.(type) {
	case *secagg.SignedAdvertisement:
		if err = s.srv.AddAdvertisement(*x); err == nil && s.stage == stageKeys {
			s.ads++
			return m.maybeCloseKeys(e.Now, out)
		}
	case *secagg.MaskedInput:
		if err = s.srv.AddMaskedInput(*x); err == nil {
			s.masked[e.Client] = true
			return m.maybeCloseInputs(e.Now, out)
		}
	case *secagg.Reveal:
		if err = s.srv.AddReveal(*x); err == nil {
			if s.srv.Ready() {
				return m.finishSecure(e.Now, out)
			}
			return out
		}
	default:
		err = fmt.Errorf("not a message the aggregator takes: %T", e.Msg)
	}
	return append(out, SecAggRefused{Client: e.Client, Round: round, Kind: kind, Err: err})
}

// maybeCloseKeys closes the keys once the round would close in the clear:
// a buffer's worth of advertisements, or the quorum of live parties.
func (m *Machine) maybeCloseKeys(now time.Time, out []Action) []Action {
	s := m.secure()
	if s == nil || s.stage != stageKeys {
		return out
	}
	if m.cfg.Buffer > 0 {
		// A buffer below t could never make a sum: it waits for t.
		if s.ads >= max(m.cfg.Buffer, s.announce.Threshold) {
			return m.closeKeys("buffer", now, out)
		}
		return out
	}
	need := m.cfg.Quorum
	if need == 0 {
		need = 0
		for _, id := range s.announce.Cohort {
			if m.clients[id].live {
				need++
			}
		}
	}
	if need > 0 && s.ads >= need {
		return m.closeKeys("quorum", now, out)
	}
	return out
}

func (m *Machine) closeKeys(reason string, now time.Time, out []Action) []Action {
	s := m.secure()
	s.reason = reason
	ads, err := s.srv.Keys()
	if err != nil {
		return m.failSecure(err, now, out)
	}
	s.keys = s.keys[:0]
	for _, a := range ads {
		s.keys = append(s.keys, a.Party)
	}
	s.stage, s.due = stageInputs, now.Add(m.secureWait(m.cfg.SecAgg.InputWait))
	return append(out, SecAggOut{Msg: bus.SecAggKeys{Round: s.round, Ads: ads}})
}

func (m *Machine) maybeCloseInputs(now time.Time, out []Action) []Action {
	s := m.secure()
	if s == nil || s.stage != stageInputs {
		return out
	}
	for _, id := range s.keys {
		if !s.masked[id] {
			return out
		}
	}
	return m.closeInputs(now, out)
}

func (m *Machine) closeInputs(now time.Time, out []Action) []Action {
	s := m.secure()
	list, err := s.srv.CloseInputs()
	if err != nil {
		return m.failSecure(err, now, out)
	}
	s.stage, s.due = stageUnmask, now.Add(m.secureWait(m.cfg.SecAgg.RevealWait))
	return append(out, SecAggOut{Msg: list})
}

// finishSecure unmasks and decodes the sum and closes the round with it.
// A sum that the survivors' declared sizes and the clip cannot give
// closes the round without a model.
func (m *Machine) finishSecure(now time.Time, out []Action) []Action {
	s := m.secure()
	sum, err := m.decodeSecure(s)
	if err != nil {
		return m.failSecure(err, now, out)
	}
	s.sum = sum
	return m.close(s.reason, now, out)
}

func (m *Machine) decodeSecure(s *secureRound) (*Contribution, error) {
	words, err := s.srv.Result()
	if err != nil {
		return nil, err
	}
	surv := s.srv.Survivors()
	d, err := s.enc.DecodeSum(words, len(surv))
	if err != nil {
		return nil, err
	}
	// The weight slot against what the survivors declared at their hellos
	// (twice: a late update folded in), the vector's norm against the
	// clip (DecodeSum).
	var declared float64
	for _, id := range surv {
		if s.announce.Unit {
			declared += 2
		} else {
			declared += 2 * m.clients[id].weight
		}
	}
	if float64(d.Weight) > declared+float64(len(surv)) {
		return nil, fmt.Errorf("%w: the sum's weight %d is above the %g the survivors can declare: implausible", secagg.ErrBounds, d.Weight, declared)
	}
	if d.Weight == 0 {
		return nil, fmt.Errorf("%w: the survivors' total weight is 0 (every one withheld): no mean", secagg.ErrBounds)
	}
	mean, err := d.Mean()
	if err != nil {
		return nil, err
	}
	p := s.announce.Params
	c := &Contribution{Weight: float64(d.Weight), Params: toFloat32(mean[:p])}
	if s.announce.Grad {
		c.Grad = toFloat32(mean[p:])
	}
	for _, x := range c.Params {
		if !finite(float64(x)) {
			return nil, fmt.Errorf("%w: the mean overflows float32", secagg.ErrBounds)
		}
	}
	return c, nil
}

// failSecure closes the round without a model and says why.
func (m *Machine) failSecure(err error, now time.Time, out []Action) []Action {
	s := m.secure()
	s.failure = err.Error()
	reason := s.reason
	if reason == "" {
		reason = "deadline"
	}
	return m.close(reason, now, out)
}

// checkSecureDeadline advances a secure round whose stage is due: the
// keys at the round's deadline (extended like a round in the clear while
// fewer than t keys are in), the inputs and the reveals at their waits.
func (m *Machine) checkSecureDeadline(s *secureRound, now time.Time, out []Action) []Action {
	switch s.stage {
	case stageKeys:
		if now.Before(m.deadline) {
			return out
		}
		// Fewer than t keys can make no sum: for the deadline the round
		// is still empty. (A party's key may reach the aggregator before
		// the update that measures its work, so a round cut at one key
		// would close every round that waits for slow training.)
		in := s.ads
		if in < s.announce.Threshold {
			in = 0
		}
		next, ok := m.dl.extension(roundView{openedAt: m.openedAt, deadline: m.deadline, now: now,
			in: in, live: m.liveCount(), starved: m.starved})
		if !ok {
			return m.closeKeys("deadline", now, out)
		}
		m.deadline = next
		m.extensions++
		return append(out, m.adapted(AdaptEmpty))
	case stageInputs:
		if now.Before(s.due) {
			return out
		}
		return m.closeInputs(now, out)
	default:
		if now.Before(s.due) {
			return out
		}
		return m.finishSecure(now, out)
	}
}

// secureWait is a stage's wait: w, or the round timeout.
func (m *Machine) secureWait(w time.Duration) time.Duration {
	if w > 0 {
		return w
	}
	return m.cfg.RoundTimeout
}

// secureClose is the record of the open round's secure aggregation for
// its RoundClosed, and the survivors whose inputs are in the sum.
func (m *Machine) secureClose() (*SecureClose, []string) {
	s := m.sec
	if s == nil || s.round != m.round {
		return &SecureClose{Failure: "no secure round: it could not open (see the round's notes), or the aggregator restarted during it"}, nil
	}
	degree := len(s.announce.Cohort) - 1
	if len(s.announce.Cohort) > secagg.CompleteGraphMax {
		degree = s.announce.Degree
		if degree == 0 {
			degree = secagg.DefaultDegree(len(s.announce.Cohort))
		}
	}
	sc := &SecureClose{Cohort: len(s.announce.Cohort), Threshold: s.announce.Threshold, Bits: s.enc.Bits, Scale: s.enc.Scale,
		Degree: degree, Failure: s.failure}
	var surv []string
	if s.sum != nil {
		surv = s.srv.Survivors()
		sc.Survivors = surv
	}
	if l := s.srv.List(); l != nil {
		sc.Dropouts = slices.Clone(l.Dropouts)
	}
	return sc, surv
}

func toFloat32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
