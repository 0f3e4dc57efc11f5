package dsim

import (
	"encoding/hex"
	"reflect"
	"slices"
	"strings"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

// The invariants of the sensitive channels: every value put on the wire
// was released through the gate and its ledger entry is durable before it
// is sent (the checks run after the step, before its actions are carried
// out); no round is released twice on a channel; embeddings go to
// neighbours only; personalized models go to their own client only.

// agentStep checks one agent step (by life incarnation) against its
// ledger as it stands after it.
func (c *checker) agentStep(id string, life uint64, acts []agent.MachineAction, ledger []privacy.Entry) *Violation {
	if fresh := ledger[min(c.seen[id], len(ledger)):]; len(fresh) > 0 {
		c.seen[id] = len(ledger)
		c.counters.LedgerEntries += len(fresh)
		if v := c.budget(id, fresh); v != nil {
			return v
		}
		if v := c.once(id, life, fresh); v != nil {
			return v
		}
	}
	for _, a := range acts {
		var v *Violation
		switch x := a.(type) {
		case agent.PublishUpdate:
			if v = c.update(id, x, ledger); v == nil {
				v = c.head(id, x, ledger)
			}
		case agent.PublishEmbeddings:
			v = c.embeddings(id, x, ledger)
		}
		if v != nil {
			return v
		}
	}
	return nil
}

// once checks that no (channel, round) is released in two lives, that
// the channels released once per round are, and that descriptors are
// released once in all.
func (c *checker) once(id string, life uint64, fresh []privacy.Entry) *Violation {
	seen := map[chanKey]bool{}
	for _, e := range fresh {
		if !e.Channel.Releases() {
			continue
		}
		k := chanKey{id, e.Channel, e.Round}
		if l, ok := c.lives[k]; ok && l != life {
			return violation(InvReleasedTwice, "%s released %s for round %d in life %d and again in life %d", id, e.Channel, e.Round, l, life)
		}
		if seen[k] && e.Channel != privacy.ChannelMargin {
			return violation(InvReleasedTwice, "%s released %s for round %d twice in one step", id, e.Channel, e.Round)
		}
		if _, ok := c.lives[k]; ok && e.Channel != privacy.ChannelMargin {
			return violation(InvReleasedTwice, "%s released %s for round %d twice", id, e.Channel, e.Round)
		}
		if e.Channel == privacy.ChannelDescriptor {
			// Once per client and job, not per round: a restarted agent
			// that finds them in its ledger never releases them again.
			if first, ok := c.desc[id]; ok {
				return violation(InvReleasedTwice, "%s released its descriptors in round %d (life %d) and again in round %d (life %d)",
					id, first.round, first.life, e.Round, life)
			}
			c.desc[id] = descRelease{e.Round, life}
		}
		seen[k], c.lives[k] = true, life
	}
	return nil
}

// published checks that a release put on the wire is in the ledger,
// unchanged, of the round and channel it is sent as, and not sent before
// (to the same recipient).
func (c *checker) published(id, to string, e privacy.Entry, ch privacy.Channel, round uint64, values int, ledger []privacy.Entry) *Violation {
	i := slices.IndexFunc(ledger, func(l privacy.Entry) bool { return l.Seq == e.Seq })
	k := relKey{client: id, to: to, seq: e.Seq}
	switch {
	case i < 0 || !reflect.DeepEqual(ledger[i], e):
		return violation(InvReleaseLedger, "%s published a %s release (seq %d) its ledger does not hold", id, ch, e.Seq)
	case e.Channel != ch || e.Round != round || values >= 0 && e.Count*e.Dim != values:
		return violation(InvReleaseLedger, "%s's round %d %s (%d values) does not match its ledger entry %+v", id, round, ch, values, e)
	case c.released[k]:
		return violation(InvReleaseLedger, "%s published release seq %d twice", id, e.Seq)
	}
	c.released[k] = true
	return nil
}

// update checks an update's sensitive fields against its releases: the
// parameters, the gradient estimator, each scalar and the descriptors have
// one entry each, in that order, and nothing else does; the descriptors'
// shape is their entry's.
func (c *checker) update(id string, pu agent.PublishUpdate, ledger []privacy.Entry) *Violation {
	u := pu.Update
	type field struct {
		ch privacy.Channel
		n  int
	}
	var want []field
	if u.Masked {
		// Under secure aggregation the parameters and the estimator went
		// into the agent's masked input, not on the wire: their releases
		// lead the list, without values to count here (check_secure.go
		// checks them against the sum).
		for _, ch := range []privacy.Channel{privacy.ChannelModel, privacy.ChannelGrad} {
			if len(pu.Releases) > len(want) && pu.Releases[len(want)].Channel == ch {
				want = append(want, field{ch, -1})
			}
		}
		if u.Params.Len()+u.Grad.Len() > 0 {
			return violation(InvReleaseLedger, "%s's masked round %d update carries %d values in the clear", id, u.Round, u.Params.Len()+u.Grad.Len())
		}
	}
	for _, f := range []field{{privacy.ChannelModel, u.Params.Len()}, {privacy.ChannelGrad, u.Grad.Len()},
		{privacy.ChannelMargin, u.Rho.Len()}, {privacy.ChannelMargin, u.Margin.Len()}, {privacy.ChannelDescriptor, u.Descriptors.Len()}} {
		if f.n > 0 {
			want = append(want, f)
		}
	}
	if len(pu.Releases) != len(want) {
		return violation(InvReleaseLedger, "%s published round %d with %d sensitive fields and %d releases", id, u.Round, len(want), len(pu.Releases))
	}
	for i, f := range want {
		if v := c.published(id, "", pu.Releases[i], f.ch, u.Round, f.n, ledger); v != nil {
			return v
		}
		if e := pu.Releases[i]; f.ch == privacy.ChannelDescriptor && (e.Dim != u.DescDim || e.Count != 4*u.DescOrders*u.DescPrincipal) {
			return violation(InvReleaseLedger, "%s's round %d descriptors of %d·%d·4 rows of %d, its ledger entry %d rows of %d",
				id, u.Round, u.DescOrders, u.DescPrincipal, u.DescDim, e.Count, e.Dim)
		}
	}
	return nil
}

// embeddings checks released boundary embeddings: to a neighbour, rows of
// one ledger entry that covers their nodes.
func (c *checker) embeddings(id string, pe agent.PublishEmbeddings, ledger []privacy.Entry) *Violation {
	e := pe.Embeddings
	if _, ok := c.neighbours[id][pe.To]; !ok {
		return violation(InvNotNeighbour, "%s released round %d embeddings to %s, not a neighbour", id, e.Round, pe.To)
	}
	if len(pe.Releases) != 1 {
		return violation(InvReleaseLedger, "%s published round %d embeddings to %s with %d releases", id, e.Round, pe.To, len(pe.Releases))
	}
	r := pe.Releases[0]
	if v := c.published(id, pe.To, r, privacy.ChannelEmb, e.Round, -1, ledger); v != nil {
		return v
	}
	if e.Data.Len() != len(e.NodeIDs)*e.Dim || e.Dim != r.Dim {
		return violation(InvReleaseLedger, "%s's round %d embeddings to %s: %d values for %d nodes of width %d, entry width %d", id, e.Round, pe.To, e.Data.Len(), len(e.NodeIDs), e.Dim, r.Dim)
	}
	keyed := e.NodeIDs
	if f := c.ledgerIDs[id]; f != nil {
		keyed = f(e.NodeIDs) // the ledger holds the nodes' keyed ids
	}
	for i, n := range keyed {
		if !slices.Contains(r.NodeIDs, n) {
			return violation(InvReleaseLedger, "%s's round %d embeddings to %s carry node %d its ledger entry does not", id, e.Round, pe.To, e.NodeIDs[i])
		}
	}
	return nil
}

// head checks the ledger head an update reports: the agent's last
// ledger entry, which the aggregator's round record repeats.
func (c *checker) head(id string, pu agent.PublishUpdate, ledger []privacy.Entry) *Violation {
	var want privacy.Ref
	if n := len(ledger); n > 0 {
		d, err := ledger[n-1].Digest()
		if err != nil {
			return violation(InvReleaseLedger, "%s's ledger entry %d has no digest: %v", id, ledger[n-1].Seq, err)
		}
		want = privacy.Ref{Seq: ledger[n-1].Seq, Digest: hex.EncodeToString(d[:])}
	}
	if got := pu.Update.Ledger.Ref(); got != want {
		return violation(InvReleaseLedger, "%s's round %d update reports ledger head %+v, its ledger's is %+v", id, pu.Update.Round, got, want)
	}
	return nil
}

// agentDelivery checks what reached agent id through its subscriptions:
// models on its own subject or the broadcast one, embeddings addressed to
// it from a neighbour.
func (c *checker) agentDelivery(id, subject string, env bus.Envelope) *Violation {
	ps, err := bus.ParseSubject(subject)
	if err != nil {
		return violation(InvMisrouted, "%s received on %q: %v", id, subject, err)
	}
	switch ps.Kind {
	case bus.KindModel:
		if ps.From != "all" && ps.From != id {
			return violation(InvMisrouted, "%s received %s's model of round %d", id, ps.From, env.Round)
		}
	case bus.KindEmb:
		if _, ok := c.neighbours[id][env.From]; !ok || ps.To != id {
			return violation(InvNotNeighbour, "%s received %s's round %d embeddings on %s", id, env.From, env.Round, subject)
		}
	}
	return nil
}

// personal checks a model the aggregator publishes in a step (ev; closed
// is the step's close decision, if any): a personalizing job sends only
// personalized models, at a close to the round's contributors, otherwise
// only to a client that just joined.
func (c *checker) personal(ev aggregator.Event, p aggregator.PublishModel, closed *aggregator.RoundClosed) *Violation {
	perso := c.cfg.personalizes()
	switch {
	case perso && p.To == "":
		return violation(InvMisrouted, "a personalizing job published a global model in round %d", p.Round)
	case p.To == "":
		return nil
	case closed != nil && perso && !slices.Contains(closed.In, p.To):
		return violation(InvMisrouted, "round %d's model for %s, who is not among its contributors %v", p.Round, p.To, closed.In)
	case closed == nil:
		if j, ok := ev.(aggregator.Join); !ok || j.Client != p.To {
			return violation(InvMisrouted, "round %d's model sent to %s outside a close or its join", p.Round, p.To)
		}
	}
	return nil
}

// aggOutgoing checks the subject a model action goes out on.
func (c *checker) aggOutgoing(a aggregator.Action, o bus.Outgoing) *Violation {
	p, ok := a.(aggregator.PublishModel)
	if !ok {
		return nil
	}
	to := p.To
	if to == "" {
		to = "all"
	}
	if !strings.HasSuffix(o.Subject, ".model."+to) {
		return violation(InvMisrouted, "the model of round %d for %s goes out on %s", p.Round, to, o.Subject)
	}
	return nil
}
