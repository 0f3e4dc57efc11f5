package dsim

import (
	"bytes"
	"fmt"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
)

// simAgg is the aggregator as the simulator runs it: the shipped machine,
// with what the shipped Server puts around it — its configuration's
// endpoint, opening every message through the validator, and the same
// conversions between bus bodies and machine events and actions
// (aggregator.EventOf, ServerConfig.Outbound, AdmitJoin, AdmitSnapshot,
// ResendRound) — and a checkpoint persisted after every step, before its
// actions are carried out, as a durable server stores one.
type simAgg struct {
	scfg  aggregator.ServerConfig
	m     *aggregator.Machine // nil while down
	ep    *bus.Endpoint       // a new one per life, as a restarted process builds
	snap  aggregator.Snapshot // persisted after every step
	dying bool
	wake  time.Time
	last  []aggregator.Action // the latest step's actions
	rec   aggRecords          // its ledger records (records.go)
}

func (a *simAgg) up() bool { return a.m != nil }

func newSimAgg(cfg Config, ids *secIdentities, now func() time.Time) (*simAgg, error) {
	rc := aggregator.Config{Algo: cfg.Algo, Rounds: cfg.Rounds, MinClients: cfg.MinClients, Quorum: cfg.Quorum,
		Buffer: cfg.Buffer, RoundTimeout: cfg.RoundTimeout, Staleness: cfg.Staleness, FreezeRounds: cfg.FreezeRounds,
		DeadlineFactor: cfg.DeadlineFactor, DeadlineCap: cfg.DeadlineCap, ServerOpt: cfg.ServerOpt}
	if cfg.fixedDeadlines {
		rc.DeadlineFactor, rc.DeadlineCap = 0, 0
	}
	if cfg.Strategy() == StrategyFedGSP {
		rc.FedGSP = cfg.FedGSP
	}
	if cfg.SecAgg {
		aggSecAgg(cfg, ids, &rc)
	}
	if cfg.Phi > 0 {
		rc.LPSFed = aggregator.LPSFedConfig{Phi: cfg.Phi, RefEvery: cfg.RefEvery, Seed: cfg.Seed, Reference: referenceKernel}
	}
	a := &simAgg{scfg: aggregator.ServerConfig{Job: jobID, Round: rc, InitSeed: cfg.Seed}}
	m, err := aggregator.NewMachine(rc)
	if err != nil {
		return nil, fmt.Errorf("dsim: %w", err)
	}
	a.m, a.snap = m, m.Snapshot()
	return a, a.newEndpoint(now)
}

// openRecords opens the first life's ledger records.
func (s *sim) openRecords() error { return s.agg.rec.open(s) }

// newEndpoint builds the endpoint of a new life on the simulated clock.
func (a *simAgg) newEndpoint(now func() time.Time) error {
	c := a.scfg
	c.Now = now
	ep, err := bus.NewEndpoint(c.EndpointConfig(), nil)
	if err != nil {
		return fmt.Errorf("dsim: aggregator endpoint: %w", err)
	}
	a.ep = ep
	return nil
}

func (s *sim) clock() time.Time { return s.now }

// deliverAgg hands the aggregator a message: opened through its
// endpoint's validator, turned into an event by aggregator.EventOf.
func (s *sim) deliverAgg(m simMsg) *Violation {
	if !s.agg.up() {
		s.counters.ToDown++
		s.tr.line(s.now, "down   %s", msgText(m))
		return nil
	}
	s.counters.Delivered++
	if m.flood != "" {
		s.counters.Flooded++
	}
	env, body, err := s.agg.ep.Open(bus.Msg{Subject: m.subject, Data: m.data})
	if err != nil {
		reason := bus.ReasonOf(err)
		if s.cfg.mutateReject != nil {
			reason = s.cfg.mutateReject(reason)
		}
		s.counters.Refused[reason]++
		s.tr.line(s.now, "refuse %s: %s", msgText(m), reason)
		return checkFlood(m, reason, nil)
	}
	ev, err := aggregator.EventOf(env, body, s.now)
	if err != nil {
		s.counters.Refused["scalar"]++
		s.tr.line(s.now, "refuse %s: %v", msgText(m), err)
		return checkFlood(m, "scalar", nil)
	}
	if ev == nil {
		s.tr.line(s.now, "recv   %s", msgText(m))
		return nil
	}
	s.tr.line(s.now, "recv   %s", msgText(m))
	if v := s.stepAgg(ev); v != nil {
		return v
	}
	if m.flood == "" {
		if v := honestDescriptors(s.agg.last); v != nil {
			return v
		}
	}
	return checkFlood(m, "", s.agg.last)
}

// stepAgg steps the aggregator, persists its snapshot, checks, and only
// then carries out the actions, as a durable server must.
func (s *sim) stepAgg(ev aggregator.Event) *Violation {
	a := s.agg
	acts := a.m.Step(ev)
	if s.cfg.mutate != nil {
		acts = s.cfg.mutate(acts)
	}
	a.last = acts
	a.snap = a.m.Snapshot()
	v := s.check.aggStep(ev, acts, a.snap, s.now)
	s.hash.u64(uint64(len(acts)), a.snap.Round)
	if _, tick := ev.(aggregator.Tick); s.tr.on() && (len(acts) > 0 || !tick) {
		s.tr.line(s.now, "step   aggregator %s: %s", eventText(ev), aggActs(acts))
	}
	if v != nil {
		return v
	}
	if a.dying {
		s.counters.MidStepCrashes++
		s.crashAgg()
		return nil
	}
	if o, ok := aggregator.ResendRound(a.m, ev, acts); ok {
		acts = append(acts, o)
	}
	for _, x := range acts {
		switch r := x.(type) {
		case aggregator.RecordRound:
			// Durable before the actions after it, as the Server appends it.
			if err := a.rec.round(s, r); err != nil {
				s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
				return nil
			}
			continue
		case aggregator.Finished:
			if err := a.rec.done(s, a.m, r.Rounds); err != nil {
				s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
				return nil
			}
		}
		x = aggregator.Anchored(x, a.rec.anchor)
		switch x := x.(type) {
		case aggregator.ReplyJoin:
			aggregator.AdmitJoin(a.ep.Validator(), x, a.snap.NumParams)
		case aggregator.PublishModel:
			s.hash.floats(x.Params)
			if x.To != "" && s.cfg.personalizes() {
				s.counters.Personal++
			}
		case aggregator.RoundClosed:
			s.counters.Closes[x.Reason]++
			if x.Mix != nil && x.Mix.Collab != nil {
				s.counters.GraphCloses++
			}
		case aggregator.Dropped:
			s.counters.Rejected[x.Reason]++
		case aggregator.Rejected:
			s.counters.Rejected["contract:"+x.Reason]++
		case aggregator.DeadlineAdapted:
			s.counters.Adapted[x.Reason]++
		case aggregator.SecAggOut:
			// The machine's Deadline is the keys' (the round's); the
			// inputs' and reveals' waits run from the keys and the list
			// (secure_round.go), and the shipped Server finds them by
			// ticking every TickEvery. The simulator wakes the machine at
			// exactly that time instead.
			if !s.cfg.noStageTicks {
				s.push(simEvent{at: s.now.Add(s.cfg.RoundTimeout), kind: evTimer, node: aggID})
			}
		case aggregator.SecAggRefused:
			s.counters.SecAggRefused[x.Kind]++
		}
		for _, o := range a.scfg.Outbound(x) {
			if v := s.check.aggOutgoing(x, o); v != nil {
				return v
			}
			data, err := a.ep.Seal(o.Kind, o.Round, o.Body)
			if err != nil {
				s.err = fmt.Errorf("dsim seed %d: aggregator: %w", s.cfg.Seed, err)
				return nil
			}
			s.route(aggID, o, data)
		}
	}
	if d := a.m.Deadline(); !d.IsZero() && !d.Equal(a.wake) {
		a.wake = d
		s.push(simEvent{at: d, kind: evTimer, node: aggID})
	}
	return nil
}

func eventText(ev aggregator.Event) string {
	switch e := ev.(type) {
	case aggregator.Join:
		return "join " + e.Client
	case aggregator.UpdateIn:
		return fmt.Sprintf("update %s r%d", e.Client, e.Round)
	case aggregator.Leave:
		return "leave " + e.Client
	case aggregator.SecAggIn:
		return secAggInText(e)
	}
	return "tick"
}

func (s *sim) crashAgg() {
	a := s.agg
	a.m, a.ep, a.dying, a.wake = nil, nil, false, time.Time{}
	s.counters.AggCrashes++
	s.tr.line(s.now, "crash  aggregator")
}

// restoreAgg brings the aggregator back from its persisted snapshot,
// through its encoding, as a restarted process reads its checkpoint, with
// a new endpoint prepared as the restarted Server prepares its own.
func (s *sim) restoreAgg() *Violation {
	a := s.agg
	b, err := a.snap.Encode()
	if err == nil {
		var snap aggregator.Snapshot
		if snap, err = aggregator.DecodeSnapshot(b); err == nil {
			// The snapshot does not record code: the configured reference
			// builder goes on building K^R.
			snap.Config.LPSFed.Reference = a.scfg.Round.LPSFed.Reference
			// Nor identities: the restarted server injects its NKey and
			// the job's keyring again.
			snap.Config.SecAgg.Signer, snap.Config.SecAgg.Verifier = a.scfg.Round.SecAgg.Signer, a.scfg.Round.SecAgg.Verifier
			if s.cfg.loseStrategyState {
				snap.Strategy = nil
			}
			if a.m, err = aggregator.Restore(snap); err == nil {
				if again, err := a.m.Snapshot().Encode(); err != nil || !bytes.Equal(again, b) {
					return violation(InvRestoreDiffers, "the restored aggregator's snapshot (%d bytes, %v) is not its checkpoint's (%d bytes)", len(again), err, len(b))
				}
				if err = a.newEndpoint(s.clock); err == nil {
					aggregator.AdmitSnapshot(a.ep.Validator(), snap)
				}
			}
			if err == nil {
				err = a.rec.open(s)
			}
		}
	}
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: restart aggregator: %w", s.cfg.Seed, err)
		return nil
	}
	s.counters.AggRestarts++
	if s.check.sec != nil {
		s.check.secRestarted()
	}
	s.tr.line(s.now, "start  aggregator from its checkpoint (round %d, open %v)", a.snap.Round, a.snap.Open)
	if err := a.rec.catchUp(s, a.m); err != nil {
		s.err = fmt.Errorf("dsim seed %d: restart aggregator: %w", s.cfg.Seed, err)
		return nil
	}
	// A deadline that passed while it was down is due now.
	return s.stepAgg(aggregator.Tick{Now: s.now})
}

// honestDescriptors checks that the aggregator did not drop an honest
// update for its descriptors: every agent releases them in the job's one
// layout, so a descriptor_shape drop means that agent and aggregator
// disagree about FedGSP's contract.
func honestDescriptors(acts []aggregator.Action) *Violation {
	for _, a := range acts {
		if d, ok := a.(aggregator.Dropped); ok && d.Reason == aggregator.ReasonDescriptorShape {
			return violation(InvHonestRefused, "the aggregator dropped %s's honest round %d update for its descriptors", d.Client, d.Round)
		}
	}
	return nil
}
