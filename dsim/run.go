package dsim

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

const (
	aggID   = bus.AggregatorID
	jobID = "dsim" // the simulated job's id, in every ledger entry
)

// epoch is the simulated clock's origin; nothing reads the wall clock.
func epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// Message bodies on the simulated network.
type (
	helloMsg  struct{ hello bus.Hello }
	updateMsg struct {
		u bus.Update
		// A flood message (dsim_flood.go) may carry forged parameters and
		// names the reason the aggregator must drop it for ("replay": none).
		forged []float32
		flood  string
	}
	replyMsg struct{ r aggregator.ReplyJoin }
	roundMsg struct{ o aggregator.OpenRound }
	modelMsg struct{ p aggregator.PublishModel }
)

type simAgent struct {
	id          string
	m           *agent.Machine
	ledger      *privacy.MemLedger // survives crashes, as a durable ledger does
	incarnation uint64
	dying       bool      // crash in the middle of the next step
	wake        time.Time // the timer already scheduled
}

type sim struct {
	ctx   context.Context
	cfg   Config
	rng   *rand.Rand
	now   time.Time
	seq   uint64
	queue eventQueue
	net   simNet
	steps int

	ids    []string
	agents map[string]*simAgent

	agg      *aggregator.Machine // nil while down
	aggSnap  aggregator.Snapshot // persisted after every step, before acting
	aggDying bool
	aggWake  time.Time

	check    *checker
	counters Counters
	trace    traceHash
	err      error

	floodRng *rand.Rand          // the flood's own stream, so that the rest of the run ignores it
	lastAgg  []aggregator.Action // the aggregator's latest actions
}

// RunDsim runs one simulated job to its end or its first violation. The
// error is for a harness that cannot run (a bad configuration), never for
// a broken invariant, which is reported in the result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	s := &sim{ctx: ctx, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x51a1)), now: epoch(),
		agents: map[string]*simAgent{}, trace: newTraceHash()}
	s.counters.Rejected, s.counters.Closes = map[string]int{}, map[string]int{}
	s.net = simNet{rng: s.rng, faults: cfg.Faults, slow: cfg.RoundTimeout, sent: map[link]uint64{},
		seen: map[link]uint64{}, counters: &s.counters}
	var err error
	if s.agg, err = aggregator.NewMachine(aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: cfg.Rounds,
		MinClients: cfg.MinClients, Quorum: cfg.Quorum, Buffer: cfg.Buffer, RoundTimeout: cfg.RoundTimeout,
		Staleness: cfg.Staleness}); err != nil {
		return Result{}, fmt.Errorf("dsim: %w", err)
	}
	s.aggSnap = s.agg.Snapshot()
	s.check = newChecker(cfg, &s.counters)
	for i := range cfg.Agents {
		if err := s.addAgent(i); err != nil {
			return Result{}, err
		}
	}
	if cfg.Flood > 0 {
		s.floodRng = rand.New(rand.NewPCG(cfg.Seed, 0xf100d))
	}
	s.scheduleFaults()
	v := s.loop()
	res := Result{Seed: cfg.Seed, Finished: s.aggSnap.Finished, Rounds: s.aggSnap.Closed, Model: s.aggSnap.GlobalModel(),
		ModelRound: s.aggSnap.ModelRound, Steps: s.steps, SimTime: s.now.Sub(epoch()), Counters: s.counters, Violation: v}
	s.trace.floats(res.Model)
	res.Trace = uint64(s.trace)
	return res, s.err
}

func (s *sim) addAgent(i int) error {
	id := fmt.Sprintf("bank-%d", i)
	l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: s.cfg.Dim, Samples: s.cfg.Samples,
		TaskSeed: s.cfg.Seed, DataSeed: s.cfg.Seed*1000003 + uint64(i) + 1})
	if err != nil {
		return fmt.Errorf("dsim: %w", err)
	}
	ledger := privacy.NewMemLedger()
	noise := s.cfg.Seed*7919 + uint64(i)
	m, err := agent.NewMachine(agent.MachineConfig{Job: jobID, Client: id, LocalEpochs: s.cfg.LocalEpochs, EvalEvery: -1,
		HelloRetry: s.cfg.HelloRetry, ModelSigma: s.cfg.ModelSigma, ModelClip: s.cfg.ModelClip,
		Privacy: privacy.Config{Delta: s.cfg.Delta, Budget: s.cfg.Budget, Seed: &noise}, Ledger: ledger}, l)
	if err != nil {
		return fmt.Errorf("dsim: %w", err)
	}
	s.ids = append(s.ids, id)
	s.agents[id] = &simAgent{id: id, m: m, ledger: ledger}
	// Agents boot within the first few milliseconds, in a seeded order.
	s.push(simEvent{at: s.now.Add(time.Duration(s.rng.Int64N(int64(10 * time.Millisecond)))), kind: evRestart, node: id})
	return nil
}

func (s *sim) loop() *Violation {
	for s.queue.Len() > 0 && !s.aggSnap.Finished && s.err == nil {
		if s.steps >= s.cfg.MaxSteps || s.now.Sub(epoch()) > s.cfg.MaxSimTime {
			break
		}
		e := heap.Pop(&s.queue).(simEvent)
		s.now = e.at
		s.steps++
		s.trace.u64(uint64(e.at.UnixNano()), uint64(e.kind))
		s.trace.str(e.node)
		if v := s.handle(e); v != nil {
			return s.stamp(v)
		}
		if v := s.check.afterStep(s.agg != nil, s.now); v != nil {
			return s.stamp(v)
		}
	}
	if !s.aggSnap.Finished && s.err == nil {
		return s.stamp(&Violation{Invariant: InvNoProgress, Detail: fmt.Sprintf(
			"job unfinished after %d steps and %v simulated (%d of %d rounds closed, %d events queued)",
			s.steps, s.now.Sub(epoch()), s.aggSnap.Closed, s.cfg.Rounds, s.queue.Len())})
	}
	return nil
}

func (s *sim) stamp(v *Violation) *Violation {
	v.Seed, v.Step, v.At = s.cfg.Seed, s.steps, s.now.Sub(epoch())
	return v
}

func (s *sim) handle(e simEvent) *Violation {
	switch e.kind {
	case evDeliver:
		return s.deliver(e.msg)
	case evTimer:
		if e.node == aggID {
			if s.agg != nil {
				return s.stepAgg(aggregator.Tick{Now: s.now})
			}
			return nil
		}
		if a := s.agents[e.node]; a.m.Up() {
			return s.stepAgent(a, agent.MachineTick{Now: s.now})
		}
	case evCrash:
		if e.node == aggID {
			switch {
			case s.agg == nil:
			case e.midStep:
				s.aggDying = true
			default:
				s.crashAgg()
			}
			return nil
		}
		if a := s.agents[e.node]; a.m.Up() {
			if e.midStep {
				a.dying = true
			} else {
				s.crashAgent(a)
			}
		}
	case evRestart:
		if e.node == aggID {
			if s.aggDying {
				s.crashAgg() // the crash never found a step to strike in
			}
			if s.agg == nil {
				return s.restoreAgg()
			}
			return nil
		}
		a := s.agents[e.node]
		if a.dying {
			s.crashAgent(a)
		}
		if !a.m.Up() {
			if a.incarnation > 0 {
				s.counters.AgentRestarts++
			}
			inc := a.incarnation
			a.incarnation++
			return s.stepAgent(a, agent.Start{Now: s.now, Incarnation: inc})
		}
	case evPartition:
		s.net.cut = e.cut
		s.counters.PartitionsStarted++
	case evHeal:
		s.net.cut = nil
	}
	return nil
}

func (s *sim) deliver(m simMsg) *Violation {
	if !s.net.admit(m) {
		return nil
	}
	if m.to == aggID {
		if s.agg == nil {
			s.counters.ToDown++
			return nil
		}
		s.counters.Delivered++
		switch b := m.body.(type) {
		case helloMsg:
			return s.stepAgg(aggregator.Join{Client: m.from, SchemaHash: b.hello.SchemaHash, NumParams: b.hello.NumParams,
				Weight: float64(b.hello.TrainSize), Now: s.now})
		case updateMsg:
			u, params := b.u, b.u.Params.Floats()
			if b.forged != nil {
				params = b.forged
			}
			if v := s.stepAgg(aggregator.UpdateIn{Client: m.from, Round: u.Round, BaseRound: u.BaseRound, Weight: u.Weight,
				Params: params, Withheld: u.Withheld, Now: s.now}); v != nil {
				return v
			}
			return s.checkFlood(m.from, b)
		}
		return nil
	}
	a := s.agents[m.to]
	if !a.m.Up() {
		s.counters.ToDown++
		return nil
	}
	s.counters.Delivered++
	switch b := m.body.(type) {
	case replyMsg:
		return s.stepAgent(a, agent.JoinReply{Accepted: b.r.Accepted, Reason: b.r.Reason, Round: b.r.Round,
			Algo: aggregator.AlgoFedAvg, InitSeed: s.cfg.Seed, Now: s.now})
	case roundMsg:
		return s.stepAgent(a, agent.RoundOpened{Round: b.o.Round, ModelRound: b.o.ModelRound, Deadline: b.o.Deadline, Now: s.now})
	case modelMsg:
		return s.stepAgent(a, agent.ModelIn{Round: b.p.Round, Params: b.p.Params, Grad: b.p.Grad, Final: b.p.Final, Now: s.now})
	}
	return nil
}

// stepAgg steps the aggregator, persists its snapshot, checks, and only
// then carries out the actions, as a durable adapter must.
func (s *sim) stepAgg(ev aggregator.Event) *Violation {
	acts := s.agg.Step(ev)
	if s.cfg.mutate != nil {
		acts = s.cfg.mutate(acts)
	}
	s.lastAgg = acts
	s.aggSnap = s.agg.Snapshot()
	v := s.check.aggStep(ev, acts, s.aggSnap, s.now)
	s.trace.u64(uint64(len(acts)), s.aggSnap.Round)
	if v != nil {
		return v
	}
	if s.aggDying {
		s.counters.MidStepCrashes++
		s.crashAgg()
		return nil
	}
	for _, a := range acts {
		switch x := a.(type) {
		case aggregator.ReplyJoin:
			s.send(aggID, x.Client, replyMsg{x})
		case aggregator.OpenRound:
			for _, id := range s.ids {
				s.send(aggID, id, roundMsg{x})
			}
		case aggregator.PublishModel:
			s.trace.floats(x.Params)
			if x.To != "" {
				s.send(aggID, x.To, modelMsg{x})
				continue
			}
			for _, id := range s.ids {
				s.send(aggID, id, modelMsg{x})
			}
		case aggregator.RoundClosed:
			s.counters.Closes[x.Reason]++
		case aggregator.Dropped:
			s.counters.Rejected[x.Reason]++
		}
	}
	if d := s.agg.Deadline(); !d.IsZero() && !d.Equal(s.aggWake) {
		s.aggWake = d
		s.push(simEvent{at: d, kind: evTimer, node: aggID})
	}
	return nil
}

func (s *sim) crashAgg() {
	s.agg, s.aggDying, s.aggWake = nil, false, time.Time{}
	s.counters.AggCrashes++
}

// restoreAgg brings the aggregator back from its persisted snapshot, through
// its encoding, as a restarted process would read its checkpoint.
func (s *sim) restoreAgg() *Violation {
	b, err := s.aggSnap.Encode()
	if err == nil {
		var snap aggregator.Snapshot
		if snap, err = aggregator.DecodeSnapshot(b); err == nil {
			s.agg, err = aggregator.Restore(snap)
		}
	}
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: restart aggregator: %w", s.cfg.Seed, err)
		return nil
	}
	s.counters.AggRestarts++
	// A deadline that passed while it was down is due now.
	return s.stepAgg(aggregator.Tick{Now: s.now})
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
	entries, err := a.ledger.Entries(s.ctx)
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
		return nil
	}
	if v := s.check.agentStep(a.id, acts, entries); v != nil {
		return v
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
		case agent.SendHello:
			s.send(a.id, aggID, helloMsg{x.Hello})
		case agent.PublishUpdate:
			s.trace.floats(x.Update.Params.Floats())
			if x.Update.Withheld {
				s.counters.Withheld++
			} else {
				s.counters.ReleasesSent++
			}
			s.send(a.id, aggID, updateMsg{u: x.Update})
			if s.floodRng != nil && a.id == s.ids[0] {
				s.flood(a.id, x.Update)
			}
		case agent.BudgetSpent:
			s.counters.BudgetRefusals++
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
	a.dying, a.wake = false, time.Time{}
	s.counters.AgentCrashes++
}
