package dsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
	"graphfed/secagg"
)

// The invariants of secure aggregation, checked on secure seeds after
// every step. The aggregator's view of a round is every protocol message
// an agent put on the wire to it (advertisements aside): what it could
// hold had the network lost nothing, a superset of what its validator
// opened, so that no guarantee rests on a message being lost.
const (
	// InvSecureSum: a secure round's published model (and its weight) is
	// not the mean of what its survivors' gates released: the weight slot
	// must equal the survivors' weights exactly, each coordinate the
	// weighted mean within the encoding's rounding bound.
	InvSecureSum = "secure-sum-wrong"
	// InvBothKinds: the aggregator was sent a self-mask share and a
	// mask-key share of one party in one round.
	InvBothKinds = "secure-both-kinds"
	// InvInputComputable: a party's input is computable from the
	// aggregator's view (secagg.Simulate's invariant 5).
	InvInputComputable = "secure-input-computable"
	// InvSecureClear: in a job that aggregates securely, an agent put its
	// released parameters or estimator on the wire in the clear. Checked
	// only under Config.StrictSecure until the agent core holds them
	// (see secureAgentStep); counted always (Counters.ClearInSecure).
	InvSecureClear = "secure-update-in-the-clear"
	// InvBelowThreshold: a secure round closed with a sum of fewer than t
	// survivors, or published a model without a sum.
	InvBelowThreshold = "secure-below-threshold"
)

// secChecker is the checker's ground truth of secure rounds.
type secChecker struct {
	rounds   map[uint64]*secRound
	released map[updKey]secRelease // what each gate released, by (client, round)
	// due is the open round's secure stage's deadline once the keys (and
	// then the list) went out: its wait after them.
	due time.Time
	ads int // advertisements the open round's protocol took
}

type secRound struct {
	ann  *bus.SecAggRound
	enc  secagg.Encoding
	self map[string]map[string]bool // party → the parties that sent the aggregator a self-mask share of it
	mask map[string]map[string]bool // party → the parties that sent it a mask-key share of it
	// peers are the pairwise masks in each party's masked input.
	peers map[string][]string
	// inputs is what each party masked, nil when the checker cannot tell
	// (it folds earlier rounds in).
	inputs map[string]*secInput
	summed []string // the survivors of the round's sum, once there is one
}

type secRelease struct {
	params, grad []float32
	weight       float64
	withheld     bool
}

// secInput is a party's input as Encode takes it: the vector before
// weighting, and the weight slot.
type secInput struct {
	x      []float64
	weight uint64
}

func newSecChecker() *secChecker {
	return &secChecker{rounds: map[uint64]*secRound{}, released: map[updKey]secRelease{}}
}

// open records a round's announcement.
func (c *checker) secOpen(o aggregator.OpenRound) *Violation {
	if o.SecAgg == nil {
		return nil
	}
	_, enc, err := o.SecAgg.Protocol(jobID, o.Round)
	if err != nil {
		return violation(InvHonestRefused, "round %d announced a secure round its parties cannot run: %v", o.Round, err)
	}
	if r := c.sec.rounds[o.Round]; r != nil {
		// Announced again (a resend): the same round.
		return nil
	}
	c.sec.rounds[o.Round] = &secRound{ann: o.SecAgg, enc: enc, self: map[string]map[string]bool{}, mask: map[string]map[string]bool{},
		peers: map[string][]string{}, inputs: map[string]*secInput{}}
	return nil
}

// secAggStep follows the open round's protocol through the aggregator's
// steps: the advertisements it took, its stages' deadlines.
func (c *checker) secAggStep(ev aggregator.Event, acts []aggregator.Action, now time.Time) {
	if in, ok := ev.(aggregator.SecAggIn); ok {
		if _, adv := in.Msg.(*secagg.SignedAdvertisement); adv && !slices.ContainsFunc(acts, func(a aggregator.Action) bool {
			_, refused := a.(aggregator.SecAggRefused)
			return refused
		}) {
			c.sec.ads++
		}
	}
	for _, a := range acts {
		switch a.(type) {
		case aggregator.SecAggOut:
			c.sec.due = now.Add(c.cfg.RoundTimeout)
		case aggregator.RoundClosed:
			c.sec.due, c.sec.ads = time.Time{}, 0
		}
	}
}

// secRestarted forgets the open round's protocol: a restarted aggregator
// holds none (its round closes without a sum at its deadline).
func (c *checker) secRestarted() { c.sec.due, c.sec.ads = time.Time{}, 0 }

// deadlineNow is the open round's deadline: the round's, or its secure
// stage's once the keys are out.
func (c *checker) deadlineNow() time.Time {
	if c.sec != nil && c.sec.due.After(c.deadline) {
		return c.sec.due
	}
	return c.deadline
}

// secureQuorum checks that a secure round's keys are not still
// collecting when the round would have closed in the clear: a buffer's
// worth of advertisements (at least t: a smaller buffer could make no
// sum), or the quorum of live cohort members.
func (c *checker) secureQuorum(post aggregator.Snapshot) *Violation {
	r := c.sec.rounds[post.Round]
	if r == nil || !c.sec.due.IsZero() {
		return nil
	}
	need := c.cfg.Quorum
	switch {
	case c.cfg.Buffer > 0:
		need = max(c.cfg.Buffer, r.ann.Threshold)
	case need == 0:
		for _, id := range post.LiveClients() {
			if slices.Contains(r.ann.Cohort, id) {
				need++
			}
		}
	}
	if need > 0 && c.sec.ads >= need {
		return violation(InvRoundOpen, "secure round %d still collects keys with %d advertisements in, %d needed", post.Round, c.sec.ads, need)
	}
	return nil
}

// secureClose checks a secure round's close (its step's actions acts):
// the sum's survivors and what was published.
func (c *checker) secureClose(rc aggregator.RoundClosed, acts []aggregator.Action) *Violation {
	sc := rc.SecAgg
	var models []aggregator.PublishModel
	for _, a := range acts {
		if p, ok := a.(aggregator.PublishModel); ok && p.Round == rc.Round {
			models = append(models, p)
		}
	}
	if sc == nil {
		return violation(InvBelowThreshold, "secure round %d closed without its secure record", rc.Round)
	}
	if !slices.Equal(rc.In, sc.Survivors) || len(rc.Stale) > 0 {
		return violation(InvNotAccepted, "secure round %d counts %v and stale %v, its sum's survivors are %v", rc.Round, rc.In, rc.Stale, sc.Survivors)
	}
	if sc.Failure != "" {
		c.counters.SecureFailed++
		if rc.Aggregate || len(models) > 0 || len(sc.Survivors) > 0 {
			return violation(InvBelowThreshold, "secure round %d failed (%s) but published %d model(s) of survivors %v", rc.Round, sc.Failure, len(models), sc.Survivors)
		}
		return nil
	}
	r := c.sec.rounds[rc.Round]
	switch {
	case r == nil:
		return violation(InvBelowThreshold, "secure round %d has a sum but was never announced", rc.Round)
	case len(sc.Survivors) < r.ann.Threshold || sc.Threshold != r.ann.Threshold:
		return violation(InvBelowThreshold, "secure round %d summed %d survivors %v at t = %d (announced t = %d)",
			rc.Round, len(sc.Survivors), sc.Survivors, sc.Threshold, r.ann.Threshold)
	}
	c.counters.SecureSums++
	for _, id := range sc.Survivors {
		if _, ok := r.peers[id]; !ok {
			return violation(InvNotAccepted, "secure round %d sums %s, who never sent a masked input", rc.Round, id)
		}
	}
	r.summed = slices.Clone(sc.Survivors)
	if v := c.secureView(rc.Round); v != nil {
		return v
	}
	return c.secureSum(rc, r, models)
}

// secureSum checks the sum against the survivors' inputs, when the
// checker knows every one (none folds an earlier round in).
func (c *checker) secureSum(rc aggregator.RoundClosed, r *secRound, models []aggregator.PublishModel) *Violation {
	var total uint64
	for _, id := range r.summed {
		if r.inputs[id] == nil {
			c.counters.SecureUnchecked++
			return nil
		}
		total += r.inputs[id].weight
	}
	c.counters.SecureChecked++
	if total == 0 {
		return violation(InvSecureSum, "secure round %d has a sum of weight 0 (its survivors' inputs weigh nothing)", rc.Round)
	}
	if !r.ann.Unit && rc.Weight != float64(total) {
		return violation(InvSecureSum, "secure round %d aggregated weight %v, its survivors %v masked inputs of weight %d", rc.Round, rc.Weight, r.summed, total)
	}
	want := make([]float64, r.enc.Dim)
	for _, id := range r.summed {
		in := r.inputs[id]
		for j, v := range in.x {
			want[j] += float64(in.weight) * v
		}
	}
	for j := range want {
		want[j] /= float64(total)
	}
	// The rounding of m inputs (ErrorBound, over the total weight), the
	// inputs' and the mean's float32 on top.
	bound := r.enc.ErrorBound(len(r.summed)) / float64(total)
	p := r.ann.Params
	if rc.Frozen {
		return nil
	}
	if len(models) == 0 {
		return violation(InvSecureSum, "secure round %d has a sum of %v and published no model", rc.Round, r.summed)
	}
	for _, m := range models {
		got := m.Params
		if r.ann.Grad {
			got = append(slices.Clone(m.Params), m.Grad...)
		}
		if len(got) != r.enc.Dim || len(m.Params) != p {
			return violation(InvSecureSum, "secure round %d published %d parameters and %d estimator values for a sum of %d", rc.Round, len(m.Params), len(m.Grad), r.enc.Dim)
		}
		for j, g := range got {
			if d := math.Abs(float64(g) - want[j]); !(d <= bound+4e-7*(math.Abs(want[j])+1)) {
				return violation(InvSecureSum, "secure round %d's model to %q, coordinate %d: %v, the survivors' mean %v (off by %.3g, bound %.3g)",
					rc.Round, m.To, j, g, want[j], d, bound)
			}
		}
	}
	return nil
}

// secureAgentStep follows an agent's step on a secure seed: the vectors
// it released into its held input, the protocol messages it sent the
// aggregator, and checks the aggregator's view after them.
func (s *sim) secureAgentStep(a *simAgent, acts []agent.MachineAction, ledger []privacy.Entry) *Violation {
	c := s.check
	for _, x := range acts {
		switch x := x.(type) {
		case agent.PublishUpdate:
			u := x.Update
			if !u.Masked {
				if n := u.Params.Len() + u.Grad.Len(); n > 0 {
					// A round whose opening announced no secure round (it
					// could not open one: fewer than 2 live parties) is
					// trained and released in the clear by the agent core,
					// and refused by the aggregator only after the wire.
					s.counters.ClearInSecure++
					if s.cfg.StrictSecure {
						return violation(InvSecureClear, "%s sent its round %d update with %d released values in the clear in a job that aggregates securely", a.id, u.Round, n)
					}
				}
				continue
			}
			rel := secRelease{weight: u.Weight, withheld: u.Withheld}
			if !u.Withheld {
				var err error
				if rel.params, rel.grad, err = s.shadowRelease(a, u.Round); err != nil {
					s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
					return nil
				}
			}
			c.sec.released[updKey{a.id, u.Round}] = rel
		case agent.PublishSecAgg:
			if v := c.secureSent(a.id, x.Msg, ledger); v != nil {
				return v
			}
		}
	}
	return nil
}

// secureSent records a protocol message agent id sent the aggregator.
func (c *checker) secureSent(id string, msg any, ledger []privacy.Entry) *Violation {
	switch m := msg.(type) {
	case secagg.MaskedInput:
		r := c.sec.rounds[m.Round]
		if r == nil {
			return violation(InvHonestRefused, "%s masked an input for round %d, which announced no secure round", id, m.Round)
		}
		if _, ok := r.peers[id]; !ok {
			r.peers[id] = slices.Clone(m.Peers)
			r.inputs[id] = c.secureInput(id, m.Round, r, ledger)
		}
		return c.secureView(m.Round)
	case secagg.Reveal:
		r := c.sec.rounds[m.Round]
		if r == nil {
			return violation(InvHonestRefused, "%s revealed shares for round %d, which announced no secure round", id, m.Round)
		}
		for _, p := range m.Self {
			addParty(r.self, p.Party, id)
		}
		for _, p := range m.Mask {
			addParty(r.mask, p.Party, id)
		}
		return c.secureView(m.Round)
	}
	return nil
}

func addParty(v map[string]map[string]bool, party, from string) {
	if v[party] == nil {
		v[party] = map[string]bool{}
	}
	v[party][from] = true
}

// secureInput is what agent id masked for round, as Encode received it:
// its gate's release of that round, weighted by its sample count (one
// under LPSFed's unit weights, zero when withheld), clipped to the
// encoding's clip; nil when its ledger record says the input folds
// earlier rounds in, or the checker saw no release.
func (c *checker) secureInput(id string, round uint64, r *secRound, ledger []privacy.Entry) *secInput {
	i := slices.IndexFunc(ledger, func(e privacy.Entry) bool {
		return e.Channel == privacy.ChannelSecAgg && e.Round == round && e.SecAgg != nil
	})
	if i < 0 || len(ledger[i].SecAgg.Stale) > 0 {
		return nil
	}
	rel, ok := c.sec.released[updKey{id, round}]
	if !ok {
		return nil
	}
	in := &secInput{x: make([]float64, r.enc.Dim)}
	if rel.withheld || len(rel.params) == 0 {
		return in
	}
	w := rel.weight
	if r.ann.Unit {
		w = 1
	}
	in.weight = min(uint64(math.Round(w)), r.enc.MaxWeight)
	for j, v := range rel.params {
		in.x[j] = float64(v)
	}
	if r.ann.Grad {
		for j, v := range rel.grad {
			in.x[r.ann.Params+j] = float64(v)
		}
	}
	var n2 float64
	for _, v := range in.x {
		n2 += v * v
	}
	if n := math.Sqrt(n2); n > r.enc.Clip {
		for j := range in.x {
			in.x[j] *= r.enc.Clip / n
		}
	}
	return in
}

// secureView checks round's view: never both kinds of share of a party
// (the aggregator signs one list, and each party answers one), and no
// party's input computable from it — its self-mask seed from t shares
// and each pairwise mask removable (t shares of either mask key), or the
// sum and every other summand (secagg.Simulate's invariant 5).
func (c *checker) secureView(round uint64) *Violation {
	r := c.sec.rounds[round]
	for _, p := range sortedKeys(r.self) {
		if len(r.mask[p]) > 0 {
			return violation(InvBothKinds, "round %d: the aggregator was sent self-mask shares of %s (from %v) and mask-key shares (from %v)",
				round, p, sortedKeys(r.self[p]), sortedKeys(r.mask[p]))
		}
	}
	t := r.ann.Threshold
	known := map[string]bool{}
	for _, p := range sortedKeys(r.peers) {
		if len(r.self[p]) < t {
			continue
		}
		open := len(r.mask[p]) >= t
		if !open {
			open = !slices.ContainsFunc(r.peers[p], func(q string) bool { return len(r.mask[q]) < t })
		}
		known[p] = open
	}
	if r.summed != nil {
		var hidden []string
		for _, p := range r.summed {
			if !known[p] {
				hidden = append(hidden, p)
			}
		}
		if len(hidden) == 1 {
			known[hidden[0]] = true
		}
	}
	for _, p := range sortedKeys(known) {
		if known[p] {
			return violation(InvInputComputable, "round %d: the aggregator can unmask %s's input alone (%d self-mask shares, %d mask-key shares, t = %d, sum of %v)",
				round, p, len(r.self[p]), len(r.mask[p]), t, r.summed)
		}
	}
	return nil
}
