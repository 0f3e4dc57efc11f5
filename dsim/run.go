package dsim

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/privacy"
)

const (
	aggID = bus.AggregatorID
	jobID = "dsim" // the simulated job's id, in every subject, envelope and ledger entry
)

// epoch is the simulated clock's origin; nothing reads the wall clock.
func epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

type sim struct {
	ctx   context.Context
	cfg   Config
	rng   *rand.Rand
	now   time.Time
	seq   uint64
	queue eventQueue
	net   simNet
	steps int

	ids        []string
	agents     map[string]*simAgent
	neighbours map[string]map[string]int // CE-FedGNN: each agent's neighbours, by id, to their index
	routes     map[string][]string       // subject -> the parties subscribed to it, aggregator first

	agg    *simAgg
	secIDs *secIdentities // the parties' NKeys, when the job aggregates securely

	check    *checker
	counters Counters
	hash     traceHash
	tr       tracer
	err      error

	floodRng *rand.Rand // the flood's own stream, so that the rest of the run ignores it
}

// Run runs one simulated job to its end or its first violation. The
// error is for a harness that cannot run (a bad configuration), never for
// a broken invariant, which is reported in the result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	s := &sim{ctx: ctx, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x51a1)), now: epoch(),
		agents: map[string]*simAgent{}, routes: map[string][]string{}, hash: newTraceHash(), tr: tracer{start: epoch()}}
	if cfg.Trace {
		s.tr.b = &strings.Builder{}
		s.tr.header(cfg)
	}
	s.counters.Rejected, s.counters.Closes, s.counters.Refused = map[string]int{}, map[string]int{}, map[string]int{}
	s.counters.Adapted, s.counters.SecAggRefused = map[string]int{}, map[string]int{}
	s.net = simNet{rng: s.rng, faults: cfg.Faults, slow: cfg.RoundTimeout, sent: map[link]uint64{},
		seen: map[link]uint64{}, counters: &s.counters}
	for i := range cfg.Agents {
		s.ids = append(s.ids, fmt.Sprintf("bank-%d", i))
	}
	s.neighbours = neighbourMap(s.ids, cfg.Links)
	var err error
	if cfg.SecAgg {
		if s.secIDs, err = newSecIdentities(cfg.Seed, s.ids); err != nil {
			return Result{}, err
		}
	}
	if s.agg, err = newSimAgg(cfg, s.secIDs, s.clock); err != nil {
		return Result{}, err
	}
	s.check = newChecker(cfg, &s.counters, s.neighbours)
	if err := s.openRecords(); err != nil {
		return Result{}, fmt.Errorf("dsim: %w", err)
	}
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
	if v == nil && s.err == nil && s.agg.snap.Finished {
		if v = s.ledgerWhole(); v != nil {
			v.Seed, v.Step, v.At = s.cfg.Seed, s.steps, s.now.Sub(epoch())
		}
	}
	snap := s.agg.snap
	res := Result{Seed: cfg.Seed, Strategy: cfg.Strategy(), Secure: cfg.SecAgg, ServerOpt: cfg.ServerOpt.Rule, Finished: snap.Finished, Rounds: snap.Closed, Model: finalModel(snap),
		ModelRound: snap.ModelRound, Steps: s.steps, SimTime: s.now.Sub(epoch()), Counters: s.counters, Violation: v}
	s.hash.floats(res.Model)
	res.Trace = uint64(s.hash)
	if v != nil {
		s.tr.line(s.now, "VIOLATION %s: %s", v.Invariant, v.Detail)
	}
	if s.tr.on() {
		res.Text = s.tr.b.String()
	}
	return res, s.err
}

// neighbourMap turns the links between agent indices into each agent's
// neighbours.
func neighbourMap(ids []string, links [][2]int) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, l := range links {
		a, b := l[0], l[1]
		if a == b || a < 0 || b < 0 || a >= len(ids) || b >= len(ids) {
			continue
		}
		for _, p := range [][2]int{{a, b}, {b, a}} {
			if out[ids[p[0]]] == nil {
				out[ids[p[0]]] = map[string]int{}
			}
			out[ids[p[0]]][ids[p[1]]] = p[1]
		}
	}
	return out
}

// finalModel is the global model, or the personalized ones in recipient
// order, one after the other.
func finalModel(snap aggregator.Snapshot) []float32 {
	if g := snap.GlobalModel(); g != nil {
		return g
	}
	var out []float32
	for _, m := range snap.Models {
		out = append(out, m.Params...)
	}
	return out
}

func (s *sim) loop() *Violation {
	for s.queue.Len() > 0 && s.err == nil {
		if s.steps >= s.cfg.MaxSteps || s.now.Sub(epoch()) > s.cfg.MaxSimTime {
			break
		}
		e := heap.Pop(&s.queue).(simEvent)
		s.now = e.at
		s.steps++
		s.hash.u64(uint64(e.at.UnixNano()), uint64(e.kind))
		s.hash.str(e.node)
		if v := s.handle(e); v != nil {
			return s.stamp(v)
		}
		if v := s.check.afterStep(s.agg.up(), s.now); v != nil {
			return s.stamp(v)
		}
		// Once the job is over, what is still on its way (done, the
		// agents' final reports and byes) plays out.
		if s.agg.snap.Finished && s.onlyFaultsLeft() {
			break
		}
	}
	if !s.agg.snap.Finished && s.err == nil {
		return s.stamp(&Violation{Invariant: InvNoProgress, Detail: fmt.Sprintf(
			"job unfinished after %d steps and %v simulated (%d of %d rounds closed, %d events queued)",
			s.steps, s.now.Sub(epoch()), s.agg.snap.Closed, s.cfg.Rounds, s.queue.Len())})
	}
	return nil
}

// onlyFaultsLeft reports whether nothing but scheduled faults (and the
// restarts that end them) is queued: no message in flight, no timer.
func (s *sim) onlyFaultsLeft() bool {
	return !slices.ContainsFunc(s.queue, func(e simEvent) bool { return e.kind == evDeliver || e.kind == evTimer })
}

func (s *sim) stamp(v *Violation) *Violation {
	v.Seed, v.Step, v.At = s.cfg.Seed, s.steps, s.now.Sub(epoch())
	return v
}

func (s *sim) handle(e simEvent) *Violation {
	switch e.kind {
	case evDeliver:
		if !s.net.admit(e.msg) {
			s.tr.line(s.now, "cut    %s (partition)", msgText(e.msg))
			return nil
		}
		if e.msg.to == aggID {
			return s.deliverAgg(e.msg)
		}
		return s.deliverAgent(s.agents[e.node], e.msg)
	case evTimer:
		if e.node == aggID {
			if s.agg.up() {
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
			case !s.agg.up():
			case e.midStep:
				s.agg.dying = true
				s.tr.line(s.now, "crash  aggregator at its next step")
			default:
				s.crashAgg()
			}
			return nil
		}
		if a := s.agents[e.node]; a.m.Up() {
			if e.midStep {
				a.dying = true
				s.tr.line(s.now, "crash  %s at its next step", a.id)
			} else {
				s.crashAgent(a)
			}
		}
	case evRestart:
		if e.node == aggID {
			if s.agg.dying {
				s.crashAgg() // the crash never found a step to strike in
			}
			if !s.agg.up() {
				return s.restoreAgg()
			}
			return nil
		}
		a := s.agents[e.node]
		if a.dying {
			s.crashAgent(a)
		}
		if !a.m.Up() {
			return s.startAgent(a)
		}
	case evPartition:
		s.net.cut = e.cut
		s.counters.PartitionsStarted++
		if s.tr.on() {
			s.tr.line(s.now, "split  %v | %v", sortedKeys(e.cut), s.uncut(e.cut))
		}
	case evHeal:
		s.net.cut = nil
		s.tr.line(s.now, "heal")
	}
	return nil
}

func (s *sim) uncut(cut map[string]bool) []string {
	var out []string
	for _, id := range append([]string{aggID}, s.ids...) {
		if !cut[id] {
			out = append(out, id)
		}
	}
	return out
}

// route sends sealed bytes from a party to every party subscribed to the
// subject (as the broker would), or to the asker of a hello.
func (s *sim) route(from string, o bus.Outgoing, data []byte) {
	m := simMsg{from: from, subject: o.Subject, data: data, kind: o.Kind, round: o.Round}
	if s.tr.on() {
		_, _, m.seq = kindOf(data)
	}
	switch o.Kind {
	case bus.KindMetrics:
		// Scores are a map, encoded in Go's random iteration order: the
		// bytes of a metrics message are not a function of the seed.
	case bus.KindSAShare:
		// Sealed with HPKE, whose ephemeral keys crypto/hpke draws from
		// the system: its subject (sender and recipient) and length are
		// the seed's, its bytes are not.
		s.hash.str(o.Subject)
		s.hash.u64(uint64(len(data)))
	default:
		s.hash.bytes(data)
	}
	if o.ReplyTo != "" {
		m.to, m.reply = o.ReplyTo, true
		s.send(m)
		return
	}
	for _, to := range s.subscribers(o.Subject) {
		if to != from {
			m.to = to
			s.send(m)
		}
	}
}

// subscribers are the parties whose subscriptions (aggregator.Subjects,
// agent.Subjects: what the drivers subscribe to) match subject.
func (s *sim) subscribers(subject string) []string {
	if r, ok := s.routes[subject]; ok {
		return r
	}
	var r []string
	match := func(id string, patterns []string) {
		for _, p := range patterns {
			if bus.SubjectMatches(p, subject) {
				r = append(r, id)
				return
			}
		}
	}
	match(aggID, s.agg.scfg.SubjectsFor(false))
	for _, id := range s.ids {
		subs := agent.Subjects(jobID, id)
		if s.cfg.SecAgg {
			subs = append(subs, bus.SecAggSubjects(jobID, id)...)
		}
		match(id, subs)
	}
	s.routes[subject] = r
	return r
}

// ledgerEntries reads an agent's ledger, through its incremental reader.
func (s *sim) ledgerEntries(a *simAgent) ([]privacy.Entry, bool) {
	e, err := a.reader.Entries(s.ctx, a.ledger)
	if err != nil {
		s.err = fmt.Errorf("dsim seed %d: %w", s.cfg.Seed, err)
		return nil, false
	}
	return e, true
}
