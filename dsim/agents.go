package dsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
	"graphfed/seeds"
)

// simAgent is an agent as the simulator runs it: the shipped machine,
// with what the shipped Agent puts around it — the endpoint of its
// configuration, opening every message through the validator (a hello's
// answer through OpenFrom, as on the inbox), and the same conversions
// between bus bodies and machine events and actions (agent.EventOf,
// JoinReplyOf, Outbound).
type simAgent struct {
	id          string
	acfg        agent.Config // the driver's configuration: job, client, clock
	numParams   int
	learner     learner.Learner // outlives crashes; a restartable one forgets what a rebuilt process would
	m           *agent.Machine
	ep          *bus.Endpoint      // a new one per life, as a restarted process builds
	ledger      *privacy.MemLedger // survives crashes, as a durable ledger does
	reader      ledgerReader       // the simulator's reading of it (ledger_read.go)
	seen        int                // ledger entries already traced
	incarnation uint64
	dying       bool      // crash in the middle of the next step
	wake        time.Time // the timer already scheduled
	noise       uint64    // its gate's noise seed (shadowRelease)
}

func (s *sim) addAgent(i int) error {
	id := s.ids[i]
	base, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: s.cfg.Dim, Samples: s.cfg.Samples,
		TaskSeed: s.cfg.Seed, DataSeed: seeds.Party(s.cfg.Seed, i, seeds.Learner)})
	if err != nil {
		return fmt.Errorf("dsim: %w", err)
	}
	var l learner.Learner = base
	switch s.cfg.Strategy() {
	case StrategyCEFedGNN:
		l = newExchangeLearner(base, i, s.neighbours[id], s.cfg.EmbDim)
	case StrategyLPSFed:
		r := rand.New(rand.NewPCG(seeds.Party(s.cfg.Seed, i, seeds.Sampler), 0x1b5))
		l = newLPSFedLearner(base, 20+r.IntN(20), 30+r.IntN(30), 60+r.IntN(100))
	case StrategyFedGSP:
		l = newFedGSPLearner(base, i, &s.cfg)
	}
	ledger := privacy.NewMemLedger()
	noise := seeds.Party(s.cfg.Seed, i, seeds.Noise)
	var sa agent.SecAggConfig
	if s.cfg.SecAgg {
		sa = agentSecAgg(s.cfg, s.secIDs, id)
	}
	m, err := agent.NewMachine(agent.MachineConfig{Job: jobID, Client: id, LocalEpochs: s.cfg.LocalEpochs, EvalEvery: -1,
		HelloRetry: s.cfg.HelloRetry, ModelSigma: s.cfg.ModelSigma, ModelClip: s.cfg.ModelClip, EmbSigma: s.cfg.EmbSigma,
		GradSigma: s.cfg.GradSigma, MarginSigma: s.cfg.MarginSigma, DescriptorSigma: s.cfg.DescSigma,
		Privacy: privacy.Config{Delta: s.cfg.Delta, Budget: s.cfg.Budget, Seed: &noise}, Ledger: ledger, SecAgg: sa}, l)
	if err != nil {
		return fmt.Errorf("dsim: %w", err)
	}
	s.agents[id] = &simAgent{id: id, acfg: agent.Config{Job: jobID, Client: id, Now: s.clock, SecAgg: sa}, numParams: l.NumParams(),
		learner: l, m: m, ledger: ledger, noise: noise}
	// Agents boot within the first few milliseconds, in a seeded order.
	s.push(simEvent{at: s.now.Add(time.Duration(s.rng.Int64N(int64(10 * time.Millisecond)))), kind: evRestart, node: id})
	return nil
}

// startAgent boots an agent, or restarts it after a crash, with a new
// endpoint.
func (s *sim) startAgent(a *simAgent) *Violation {
	ep, err := bus.NewEndpoint(a.acfg.EndpointConfig(a.numParams), nil)
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
		return nil
	}
	a.ep = ep
	if a.incarnation > 0 {
		s.counters.AgentRestarts++
	}
	inc := a.incarnation
	a.incarnation++
	s.tr.line(s.now, "start  %s (life %d)", a.id, inc)
	if _, ok := a.learner.(learner.DescriptorReleaser); ok && inc > 0 {
		entries, ok := s.ledgerEntries(a)
		if !ok {
			return nil
		}
		if slices.ContainsFunc(entries, func(e privacy.Entry) bool { return e.Channel == privacy.ChannelDescriptor }) {
			s.counters.DescKept++ // checker.once sees to it that they are not released again
		}
	}
	return s.stepAgent(a, agent.Start{Now: s.now, Incarnation: inc})
}

// deliverAgent hands an agent a message: the answer to its hello through
// OpenFrom, anything else through its validator, then agent.EventOf.
func (s *sim) deliverAgent(a *simAgent, m simMsg) *Violation {
	if !a.m.Up() {
		s.counters.ToDown++
		s.tr.line(s.now, "down   %s", msgText(m))
		return nil
	}
	s.counters.Delivered++
	var ev agent.MachineEvent
	if m.reply {
		var hr bus.HelloReply
		if _, err := a.ep.OpenFrom(m.data, bus.KindHello, aggID, &hr); err != nil {
			return s.refusedHonest(m, err)
		}
		ev = agent.JoinReplyOf(hr, s.now)
	} else {
		env, body, err := a.ep.Open(bus.Msg{Subject: m.subject, Data: m.data})
		if err != nil {
			return s.refusedHonest(m, err)
		}
		if v := s.check.agentDelivery(a.id, m.subject, env); v != nil {
			return v
		}
		if ev = agent.EventOf(env, body, s.now); ev == nil {
			return nil
		}
	}
	s.tr.line(s.now, "recv   %s", msgText(m))
	return s.stepAgent(a, ev)
}

// refusedHonest reports an honest message a receiver's validator refused:
// the sender sealed what the receiver cannot open.
func (s *sim) refusedHonest(m simMsg, err error) *Violation {
	reason := bus.ReasonOf(err)
	s.counters.Refused[reason]++
	s.tr.line(s.now, "refuse %s: %s", msgText(m), reason)
	return violation(InvHonestRefused, "%s refused %s's %s of round %d: %v", m.to, m.from, m.kind, m.round, err)
}

func (s *sim) stepAgent(a *simAgent, ev agent.MachineEvent) *Violation {
	acts, err := a.m.Step(s.ctx, ev)
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
		return nil
	}
	if s.cfg.mutateAgent != nil {
		acts = s.cfg.mutateAgent(acts)
	}
	entries, ok := s.ledgerEntries(a)
	if !ok {
		return nil
	}
	if s.tr.on() {
		if len(acts) > 0 {
			s.tr.line(s.now, "step   %s %T: %s", a.id, ev, agentActs(acts))
		}
		for _, e := range entries[min(a.seen, len(entries)):] {
			s.tr.line(s.now, "ledger %s #%d %s r%d rows %d dim %d sigma %.4g", a.id, e.Seq, e.Channel, e.Round, e.Count, e.Dim, e.Sigma)
		}
		a.seen = len(entries)
	}
	if g := a.m.Gate(); g != nil {
		if s.check.ledgerIDs == nil {
			s.check.ledgerIDs = map[string]func([]int64) []int64{}
		}
		s.check.ledgerIDs[a.id] = g.LedgerNodeIDs
	}
	if v := s.check.agentStep(a.id, a.incarnation, acts, entries); v != nil {
		return v
	}
	if s.cfg.SecAgg {
		if v := s.secureAgentStep(a, acts, entries); v != nil {
			return v
		}
	}
	if s.cfg.shadowCheck {
		if v := s.shadowMatches(a, acts); v != nil {
			return v
		}
	}
	if a.dying {
		if len(acts) > 0 {
			s.counters.MidStepCrashes++
		}
		s.crashAgent(a)
		return nil
	}
	for _, x := range acts {
		switch x := x.(type) {
		case agent.PublishUpdate:
			s.hash.floats(x.Update.Params.Floats())
			if x.Update.Withheld {
				s.counters.Withheld++
			} else {
				s.counters.ReleasesSent++
			}
			if x.Update.Rho.Len() > 0 {
				s.counters.ScalarsSent++
			}
			if x.Update.Margin.Len() > 0 {
				s.counters.ScalarsSent++
			}
			if x.Update.Descriptors.Len() > 0 {
				s.counters.DescSent++
			}
			if x.Update.Masked {
				s.counters.MaskedUpdates++
			}
		case agent.PublishSecAgg:
			s.counters.SecAggSent++
		case agent.PublishEmbeddings:
			s.counters.EmbSent++
		case agent.BudgetSpent:
			s.counters.BudgetRefusals++
			if x.Channel == privacy.ChannelDescriptor {
				s.counters.DescRefused++
			}
		case agent.Finished:
			s.counters.Finals++
		}
		for _, o := range agent.Outbound(jobID, a.id, x) {
			data, err := a.ep.Seal(o.Kind, o.Round, o.Body)
			if err != nil {
				s.err = fmt.Errorf("dsim seed %d: %s: %w", s.cfg.Seed, a.id, err)
				return nil
			}
			s.route(a.id, o, data)
			if pu, ok := x.(agent.PublishUpdate); ok && s.floodRng != nil && a.id == s.ids[0] {
				s.flood(a.id, pu.Update, data)
			}
		}
	}
	if w := a.m.NextWake(); !w.IsZero() && !w.Equal(a.wake) {
		a.wake = w
		s.push(simEvent{at: w, kind: evTimer, node: a.id})
	}
	return nil
}

func (s *sim) crashAgent(a *simAgent) {
	// Crash cannot fail: it only forgets.
	_, _ = a.m.Step(s.ctx, agent.Crash{})
	if r, ok := a.learner.(restartable); ok {
		r.restart()
	}
	a.dying, a.wake, a.ep = false, time.Time{}, nil
	s.counters.AgentCrashes++
	s.tr.line(s.now, "crash  %s", a.id)
}
