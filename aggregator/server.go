package aggregator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"graphfed/bus"
)

// Server is the aggregator's NATS adapter for every strategy: it feeds
// Machine with events decoded from the transport and carries out its
// actions, sending and opening envelopes through its bus.Endpoint.
type Server struct {
	cfg     ServerConfig
	tr      bus.Transport
	machine *Machine
	ep      *bus.Endpoint
	// secSpent is the open round's time in secure-aggregation steps.
	secSpent time.Duration

	mu     sync.Mutex
	inbox  *Inbox // bounded, per-sender fair (inbox.go)
	flow   flowLimits
	sub    bus.Subscription
	notify chan struct{}
	hellos map[string]bus.Msg // pending hello requests by client
	result Result
	doneAt time.Time
	// finalFrom are the clients live when the job finished, whose final
	// metrics the server waits for (bounded by FinalWait).
	finalFrom []string
	finalCh   chan struct{}

	dur  durableState // durable servers only
	news newsTimer    // re-announcement
	// resendDue: a join asked for the open round again (flushResend);
	// resentAt: when it last went out.
	resendDue bool
	resentAt  time.Time
	hguard    *HelloGuard
	rec       recordState // the aggregator's ledger records (records_server.go)
}

type queued struct {
	msg    bus.Msg
	logged *bus.LoggedMsg // set for updates from the durable log
}

// NewServer builds a server; Run starts it.
func NewServer(cfg ServerConfig, tr bus.Transport) (*Server, error) {
	if !bus.ValidID(cfg.Job) {
		return nil, fmt.Errorf("aggregator: job id %q is not [a-z0-9-]{1,64}", cfg.Job)
	}
	m, err := NewMachine(cfg.Round)
	if err != nil {
		return nil, err
	}
	if cfg.TickEvery == 0 {
		cfg.TickEvery = 20 * time.Millisecond
	}
	if cfg.FinalWait == 0 {
		cfg.FinalWait = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if (cfg.Store == nil) != (cfg.Updates == nil) {
		return nil, fmt.Errorf("aggregator: job %s: a durable server needs both a store and an update log", cfg.Job)
	}
	switch {
	case cfg.Store != nil && cfg.Lease == nil:
		// Without one a second aggregator of the job would announce itself
		// to the agents of the first (recovery_lease.go).
		return nil, fmt.Errorf("aggregator: job %s: a durable server needs the job's run lease (AcquireLease)", cfg.Job)
	case cfg.Lease != nil && cfg.Run == "":
		cfg.Run = cfg.Lease.Run()
	case cfg.Lease != nil && cfg.Run != cfg.Lease.Run():
		return nil, fmt.Errorf("aggregator: job %s: run %s does not hold the lease, run %s does", cfg.Job, cfg.Run, cfg.Lease.Run())
	}
	if cfg.Run == "" {
		if cfg.Run, err = bus.NewRunID(cfg.Now()); err != nil {
			return nil, fmt.Errorf("aggregator: job %s: %w", cfg.Job, err)
		}
	}
	start, ok := bus.RunStart(cfg.Run)
	if !ok {
		return nil, fmt.Errorf("aggregator: job %s: run id %q is not a bus.NewRunID", cfg.Job, cfg.Run)
	}
	if cfg.HelloSkew == 0 {
		cfg.HelloSkew = DefaultHelloSkew
	}
	if cfg.StopWait <= 0 {
		cfg.StopWait = 2 * time.Second
	}
	ep, err := bus.NewEndpoint(cfg.EndpointConfig(), tr)
	if err != nil {
		return nil, fmt.Errorf("aggregator: job %s: %w", cfg.Job, err)
	}
	flow := flowFor(cfg, tr)
	return &Server{hguard: NewHelloGuard(start, cfg.HelloSkew),
		cfg: cfg, tr: tr, machine: m, ep: ep, flow: flow, inbox: NewInbox(flow.inbox),
		notify: make(chan struct{}, 1),
		hellos: map[string]bus.Msg{},
		result: Result{
			Final:    map[string]map[string]float64{},
			PerRound: map[uint64]map[string]map[string]float64{},
			Dropped:  map[string]int{},
		},
		finalCh: make(chan struct{}),
		dur:     durableState{pendingAt: map[string]uint64{}},
	}, nil
}

// Validator exposes the reject counters.
func (s *Server) Validator() *bus.Validator { return s.ep.Validator() }

func (s *Server) enqueue(m bus.Msg) { s.push(queued{msg: m}) }

// push queues q in the inbox and wakes the round loop. It runs on the NATS
// delivery and never blocks on the round loop: a message that does not fit
// its sender's queue is dropped, counted and logged (flow.go).
//
// With a keyring, a queued message is then hashed for its signature check
// here (bus.Prehash), while the round loop handles the messages before it:
// verification is mostly hashing, and this way it runs beside the rest of
// the ingest rather than before it. Only queued messages are hashed, so a
// flood costs no more than before.
func (s *Server) push(q queued) {
	sender := senderOf(q.msg.Subject)
	verify := s.cfg.Keyring != nil && q.logged == nil
	if verify {
		q.msg.Pre = bus.NewPrehash(q.msg.Data)
	}
	s.mu.Lock()
	ok, st := s.inbox.Push(sender, q, q.logged != nil)
	waiting, bytes := s.inbox.Len(), s.inbox.Bytes()
	s.mu.Unlock()
	if !ok {
		s.logDrop(sender, q.msg, st, waiting, bytes)
		return
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
	if verify {
		q.msg.Pre.Compute()
	}
}

// Run serves the job until it finishes (and clients reported their final
// scores, or FinalWait passed) or ctx ends.
func (s *Server) Run(ctx context.Context) (Result, error) {
	j := s.cfg.Job
	if s.durable() {
		if err := s.restore(ctx); err != nil {
			return Result{}, err
		}
	}
	if err := s.startRecords(ctx); err != nil {
		return Result{}, err
	}
	sub, err := s.subscribe(s.cfg.SubjectsFor(s.durable()))
	if err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	defer sub.Unsubscribe()
	if err := bus.AwaitSubscriptions(ctx, s.tr, func(err error) {
		s.cfg.Log.Warn().Err(err).Msg("the server has not confirmed the aggregator's subscriptions yet; waiting")
	}); err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	s.cfg.Log.Info().Str("job", j).Str("algo", s.cfg.Round.Algo).Int("rounds", s.cfg.Round.Rounds).
		Int("min_clients", s.cfg.Round.MinClients).Dur("round_timeout", s.cfg.Round.RoundTimeout).
		Float64("deadline_factor", s.cfg.Round.DeadlineFactor).
		Bool("durable", s.durable()).Bool("resumed", s.result.Resumed).Str("run", s.cfg.Run).
		Int64("max_payload", s.flow.payload).Int("inbox_sender_bytes", s.flow.inbox.SenderBytes).
		Int("inbox_sender_msgs", s.flow.inbox.SenderMsgs).Int("pending_bytes", s.flow.pending.Bytes).Msg("aggregator ready")
	if s.durable() {
		stop, err := s.startLog(ctx)
		if err != nil {
			return Result{}, err
		}
		defer stop()
	}
	s.news.reset(s.cfg.Now(), s.cfg.Reannounce)
	tick := time.NewTicker(s.cfg.TickEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.stop(ctx)
		case <-s.leaseLost():
			return s.snapshot(), s.leaseHeld()
		case <-s.notify:
		case <-tick.C:
		}
		if err := s.drain(ctx); err != nil {
			return s.failed(ctx, err)
		}
		if err := s.flushResend(ctx); err != nil {
			return s.failed(ctx, err)
		}
		if err := s.step(ctx, Tick{Now: s.cfg.Now()}); err != nil {
			return s.failed(ctx, err)
		}
		if err := s.maybeReannounce(ctx); err != nil {
			return s.failed(ctx, err)
		}
		if s.machine.Finished() {
			if s.allFinalIn() || s.cfg.Now().Sub(s.doneAt) > s.cfg.FinalWait {
				if err := s.recordDone(ctx); err != nil {
					// The job is over; its ledger lacks the record an
					// audit needs to see the tails of the chains whole.
					return s.snapshot(), err
				}
				return s.snapshot(), nil
			}
		}
	}
}

func (s *Server) snapshot() Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	r.Rejects = s.ep.Validator().Rejects()
	r.RejectsBy = s.ep.Validator().RejectsBy()
	r.Model, _ = s.machine.Model()
	r.Run = s.cfg.Run
	r.Models = s.machine.Models()
	r.Rounds = uint64(len(r.Closes))
	r.Flow = s.flowReport()
	r.Heads = s.finalHeads()
	for _, rc := range r.Closes {
		if rc.Mix != nil {
			r.Mixes = append(r.Mixes, *rc.Mix)
		}
		for id, k := range rc.SetAside {
			if r.SetAside == nil {
				r.SetAside = map[string]int{}
			}
			r.SetAside[id] += k
		}
	}
	return r
}

// allFinalIn reports whether every client live when the job finished sent
// its final metrics. The clients are taken when the job finished, not now:
// an agent sends its final metrics, then its bye, on two subjects whose
// deliveries are not ordered against each other (SubscribeBounded), so
// its bye may be handled first.
func (s *Server) allFinalIn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := s.finalFrom
	if s.doneAt.IsZero() { // finished before this run (a restored job)
		from = s.machine.liveClients()
	}
	for _, id := range from {
		if _, ok := s.result.Final[id]; !ok {
			return false
		}
	}
	return true
}

// drain handles the queued messages. A failure to store a checkpoint is
// returned (the server must stop: it may not act on a step it could not
// persist); other failures are logged.
func (s *Server) drain(ctx context.Context) error {
	for {
		s.mu.Lock()
		q, ok := s.inbox.Pop()
		s.mu.Unlock()
		if !ok {
			return nil
		}
		var err error
		if q.logged != nil {
			err = s.handleLogged(ctx, *q.logged)
		} else {
			err = s.handle(ctx, q.msg)
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if err != nil {
			s.cfg.Log.Error().Err(err).Msg("aggregator: handling message")
		}
	}
}

func (s *Server) handle(ctx context.Context, m bus.Msg) error {
	env, body, err := s.ep.Open(m)
	if err != nil {
		s.cfg.Log.Warn().Str("subject", m.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
		return nil
	}
	now := s.cfg.Now()
	switch b := body.(type) {
	case *bus.Hello:
		if err := s.hguard.Check(env); err != nil {
			s.ep.Validator().Reject(err)
			s.cfg.Log.Warn().Str("subject", m.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
			return nil
		}
		s.mu.Lock()
		s.hellos[env.From] = m
		s.mu.Unlock()
	case *bus.Metrics:
		s.mu.Lock()
		if b.Final {
			s.result.Final[env.From] = b.Scores
			s.noteFinalHead(env.From, b.Ledger)
		} else {
			pr := s.result.PerRound[b.Round]
			if pr == nil {
				pr = map[string]map[string]float64{}
				s.result.PerRound[b.Round] = pr
			}
			pr[env.From] = b.Scores
		}
		s.mu.Unlock()
		return nil
	}
	ev, err := EventOf(env, body, now)
	if err != nil {
		s.cfg.Log.Warn().Str("from", env.From).Err(err).Msg("rejected update")
		return nil
	}
	if ev == nil {
		return nil
	}
	return s.step(ctx, ev)
}

func (s *Server) step(ctx context.Context, ev Event) error { return s.stepFrom(ctx, ev, nil) }

// stepFrom applies ev (an update from the durable log when lm is set),
// stores a checkpoint if the server is durable and the step may have
// changed the machine, carries the actions out, and acknowledges lm.
func (s *Server) stepFrom(ctx context.Context, ev Event, lm *bus.LoggedMsg) error {
	before, adopted := s.machine.Round(), s.machine.schemaHash != ""
	stepStart := time.Now()
	acts := s.machine.Step(ev)
	s.timeSecure(ev, time.Since(stepStart), acts)
	if j, ok := ev.(Join); ok && !adopted && s.machine.schemaHash != "" {
		s.cfg.Log.Warn().Str("schema", s.machine.schemaHash).Int("params", s.machine.numParams).Str("from", j.Client).
			Msg("NO MODEL SCHEMA FIXED FOR THE JOB: adopted the first accepted hello's; give the aggregator --schema HASH:PARAMS so that no party can set it")
	}
	s.account(acts)
	if s.cfg.Observer != nil {
		s.cfg.Observer.Stepped(ev, before, acts)
	}
	accepted := s.noteNews(ev, acts)
	if s.durable() {
		_, tick := ev.(Tick)
		s.track(ev, lm, before, accepted, acts)
		if !tick || len(acts) > 0 {
			// A run whose lease lapsed must not overwrite the checkpoint
			// of the run that may have taken the job over.
			if err := s.leaseHeld(); err != nil {
				return err
			}
			if err := s.checkpoint(ctx); err != nil {
				return &fatalError{err}
			}
		}
	}
	for _, a := range acts {
		if err := s.act(ctx, a); err != nil {
			return err
		}
	}
	s.resendRound(ev, acts)
	if lm != nil {
		if err := lm.Ack(ctx); err != nil {
			// Harmless: the update comes again and counts as a duplicate.
			s.cfg.Log.Warn().Err(err).Uint64("seq", lm.Seq).Msg("acknowledging an update")
		}
	}
	return nil
}

// account records close decisions and drops in the result before the
// checkpoint that must include them.
func (s *Server) account(acts []Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range acts {
		switch x := a.(type) {
		case RoundClosed:
			s.result.Closes = append(s.result.Closes, x)
		case Dropped:
			s.result.Dropped[x.Reason]++
		case Rejected:
			s.ep.Validator().RejectFrom(x.Client, &bus.RejectError{Reason: x.Reason, Err: errors.New(x.Detail)})
		case SecAggRefused:
			s.result.noteSecAggRefused(x)
		case DeadlineAdapted:
			s.result.Deadlines = append(s.result.Deadlines, x)
		}
	}
}

// updateEvent turns a received update into an event. A released scalar
// (ρ_c, M^c) must be absent or exactly one finite value.
func updateEvent(from string, b *bus.Update, now time.Time) (UpdateIn, error) {
	ev := UpdateIn{Client: from, Round: b.Round, BaseRound: b.BaseRound, Weight: b.Weight,
		Params: b.Params.Floats(), Grad: b.Grad.Floats(), Withheld: b.Withheld, RhoVersion: b.RhoVersion, Masked: b.Masked, Now: now}
	if b.TrainNanos > 0 {
		ev.Took = time.Duration(b.TrainNanos)
	}
	if b.Ledger != nil {
		if ev.Head = b.Ledger.Ref(); !ev.Head.Valid() {
			return UpdateIn{}, fmt.Errorf("update of round %d: ledger head seq %d digest %q names no entry", b.Round, b.Ledger.Seq, b.Ledger.Digest)
		}
	}
	if b.Descriptors.Len() > 0 {
		ev.Descriptors = &Descriptor{Orders: b.DescOrders, Principal: b.DescPrincipal, Dim: b.DescDim, Rows: b.Descriptors.Floats()}
	}
	var ok bool
	if ev.Rho, ev.HasRho, ok = scalar(b.Rho); !ok {
		return UpdateIn{}, fmt.Errorf("update of round %d: rho of %d values is not one finite value", b.Round, b.Rho.Len())
	}
	if ev.Margin, ev.HasMargin, ok = scalar(b.Margin); !ok {
		return UpdateIn{}, fmt.Errorf("update of round %d: margin of %d values is not one finite value", b.Round, b.Margin.Len())
	}
	if !ev.HasRho {
		ev.RhoVersion = 0
	}
	return ev, nil
}

// scalar reads a released scalar: absent (empty) or exactly one finite value.
func scalar(v bus.Sensitive) (x float64, has, ok bool) {
	switch f := v.Floats(); {
	case len(f) == 0:
		return 0, false, true
	case len(f) == 1 && !math.IsNaN(float64(f[0])) && !math.IsInf(float64(f[0]), 0):
		return float64(f[0]), true, true
	}
	return 0, false, false
}

func (s *Server) act(ctx context.Context, a Action) error {
	if r, ok := a.(RecordRound); ok {
		// Durable before anything after it goes out; a record that cannot
		// be stored stops the server (a durable one resumes and appends it).
		if err := s.appendRecord(ctx, r); err != nil {
			var fatal *fatalError
			if errors.As(err, &fatal) {
				return err
			}
			return &fatalError{err}
		}
		return nil
	}
	a = Anchored(a, s.anchor())
	switch x := a.(type) {
	case ReplyJoin:
		AdmitJoin(s.ep.Validator(), x, s.machine.numParams)
		if x.Accepted {
			s.cfg.Log.Info().Str("client", x.Client).Uint64("round", x.Round).Msg("client joined")
		} else {
			s.cfg.Log.Warn().Str("client", x.Client).Str("reason", x.Reason).Msg("join refused")
		}
	case OpenRound:
		s.cfg.Log.Debug().Uint64("round", x.Round).Time("deadline", x.Deadline).Msg("round open")
	case RoundClosed:
		l := s.cfg.Log.Info().Uint64("round", x.Round).Str("reason", x.Reason).Strs("in", x.In).Strs("late", x.Late).
			Strs("stale", x.Stale).Strs("dead", x.Dead).Bool("frozen", x.Frozen).Dur("took", x.Duration)
		if x.Mix != nil && x.Mix.Collab != nil {
			// The whole M×M graph is a screenful per round; the weight each
			// client keeps on its own model says how personal the rows are.
			l = l.Interface("collab_self", collabSelf(x.Mix.Collab))
			s.cfg.Log.Debug().Uint64("round", x.Round).Interface("collab", x.Mix.Collab).Msg("collaboration graph")
		} else if x.Mix != nil {
			l = l.Interface("rho_bar", x.Mix.RhoBar).Float64("global_margin", x.Mix.GlobalMargin)
		}
		if x.SetAside != nil {
			l = l.Interface("robust_set_aside", x.SetAside)
		}
		if sa := x.SecAgg; sa != nil {
			l = l.Int("secagg_survivors", len(sa.Survivors)).Int("secagg_dropouts", len(sa.Dropouts)).Int("secagg_t", sa.Threshold).
				Float64("secagg_seconds", sa.Seconds)
			if sa.Failure != "" {
				l = l.Str("secagg_failure", sa.Failure)
			}
		}
		l.Msg("round closed")
		if s.cfg.OnRound != nil {
			s.cfg.OnRound(x)
		}
	case DeadlineAdapted:
		s.cfg.Log.Info().Uint64("round", x.Round).Str("reason", x.Reason).Dur("budget", x.Budget).
			Time("deadline", x.Deadline).Dur("median", x.Median).Int("samples", x.Samples).Msg("round deadline adapted")
	case Rejected:
		s.cfg.Log.Warn().Str("client", x.Client).Uint64("round", x.Round).Str("reason", x.Reason).Str("detail", x.Detail).
			Msg("rejected: outside the job's contract")
	case Dropped:
		s.cfg.Log.Debug().Str("client", x.Client).Uint64("round", x.Round).Str("reason", x.Reason).Msg("update dropped")
	case SecAggRefused:
		l := s.cfg.Log.Warn()
		if x.IsLate() {
			l = s.cfg.Log.Info()
		}
		l.Str("client", x.Client).Uint64("round", x.Round).Str("kind", x.Kind).Err(x.Err).Msg("secure aggregation: message refused")
	case SecAggOut:
		s.cfg.Log.Debug().Uint64("round", s.machine.Round()).Str("msg", fmt.Sprintf("%T", x.Msg)).Msg("secure aggregation: sent")
	case Finished:
		s.doneAt = s.cfg.Now()
		live := s.machine.liveClients()
		s.mu.Lock()
		s.finalFrom = live
		s.mu.Unlock()
		s.cfg.Log.Info().Uint64("rounds", x.Rounds).Msg("job finished")
	}
	outs := s.cfg.Outbound(a)
	if len(outs) > 0 {
		if err := s.leaseHeld(); err != nil {
			return err
		}
	}
	for _, o := range outs {
		if o.ReplyTo != "" {
			s.mu.Lock()
			req, ok := s.hellos[o.ReplyTo]
			delete(s.hellos, o.ReplyTo)
			s.mu.Unlock()
			if !ok {
				continue
			}
			if err := s.ep.Respond(req, o.Kind, o.Body); err != nil {
				return err
			}
			continue
		}
		if err := s.ep.Publish(ctx, o.Subject, o.Kind, o.Round, o.Body); err != nil {
			return err
		}
	}
	return nil
}

// RoundScores returns the clients' scores reported at the start of round r
// (those of the model round r trained from).
func (s *Server) RoundScores(r uint64) map[string]map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]float64, len(s.result.PerRound[r]))
	for id, sc := range s.result.PerRound[r] {
		out[id] = sc
	}
	return out
}

// collabSelf is each client's weight w_ii on its own model in FedGSP's
// collaboration graph W (rows over the clients in id order), to three
// decimals.
func collabSelf(w map[string][]float64) map[string]float64 {
	ids := make([]string, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make(map[string]float64, len(ids))
	for i, id := range ids {
		if row := w[id]; i < len(row) {
			out[id] = math.Round(row[i]*1000) / 1000
		}
	}
	return out
}

// timeSecure adds a secure-aggregation step's time to the open round's,
// and states the total in the round's close (SecureClose.Seconds): the
// machine reads no clock.
func (s *Server) timeSecure(ev Event, took time.Duration, acts []Action) {
	if _, ok := ev.(SecAggIn); ok {
		s.secSpent += took
	}
	for i, a := range acts {
		if rc, ok := a.(RoundClosed); ok && rc.SecAgg != nil {
			sc := *rc.SecAgg
			sc.Seconds = s.secSpent.Seconds()
			rc.SecAgg = &sc
			acts[i] = rc
			s.secSpent = 0
		}
	}
}
