package aggregator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
)

// ServerConfig wires a Machine to a transport.
type ServerConfig struct {
	Job string
	// Round is the job's round policy and algorithm: every strategy runs
	// behind the same server.
	Round    Config
	InitSeed uint64          // shared model initialisation seed sent in hello replies
	Enrol    map[string]bool // clients allowed to join; nil: any valid id
	// MaxBytes rejects larger messages as "oversized"; 0: bus.DefaultMaxPayload.
	MaxBytes  int
	TickEvery time.Duration // how often deadlines are checked; default 20ms
	// FinalWait bounds how long the server waits for clients' final metrics
	// after the job is done; default 10s.
	FinalWait time.Duration
	Now       func() time.Time // default time.Now
	Log       zerolog.Logger
	// OnRound, if set, is called with every close decision (progress
	// output); a personalizing strategy's mixing is in RoundClosed.Mix.
	OnRound func(RoundClosed)
	// Store and Updates, both set, make the server durable (store.go,
	// recovery.go): updates come from the log instead of core NATS, a
	// checkpoint is stored after every step before its actions are carried
	// out, and Run resumes from the latest checkpoint. Both nil: nothing
	// survives a crash of the server.
	Store   Store
	Updates UpdateLog
	// Reannounce, when positive, publishes the latest model and the open
	// round again (done, once finished) after this long without news, then
	// at doubling intervals up to the round timeout. Core NATS keeps no
	// messages, so an announcement lost to a server restart or a node
	// failover would otherwise leave the clients idle until the deadline;
	// clients ignore repeats. 0: never.
	Reannounce time.Duration
	// Keyring, when set, requires every received envelope to carry its
	// sender's valid signature (bus.Schema.Keyring).
	Keyring *bus.Keyring
	// Signer, when set, signs every envelope the server sends; it must sign
	// as bus.AggregatorID, with the key the keyring lists for it.
	Signer *bus.Signer
}

// Result is what a finished job reports.
type Result struct {
	Rounds   uint64
	Closes   []RoundClosed
	Final    map[string]map[string]float64 // client -> final scores
	PerRound map[uint64]map[string]map[string]float64
	Rejects  map[string]uint64
	Dropped  map[string]int // by reason
	Model    []float32      // the latest global model; nil when the strategy personalizes
	// Models are the latest models published: the global one, or each
	// client's latest personalized one (To), sorted by recipient.
	Models []PublishModel
	// Mixes are a personalizing strategy's mixing decisions, one per
	// closed round (RoundClosed.Mix), in order.
	Mixes []Mixed
	// Resumed says that a durable server resumed from a checkpoint, in
	// round ResumedRound (0: before the first round opened).
	Resumed      bool
	ResumedRound uint64
	// Deadlines are the adaptive deadline's changes, in order
	// (Config.DeadlineFactor); empty when the deadline does not adapt.
	Deadlines []DeadlineAdapted
}

// Server is the aggregator's NATS adapter for every strategy: it feeds
// Machine with events decoded from the transport and carries out its
// actions, sending and opening envelopes through its bus.Endpoint.
type Server struct {
	cfg     ServerConfig
	tr      bus.Transport
	machine *Machine
	ep      *bus.Endpoint

	mu      sync.Mutex
	queue   []queued
	notify  chan struct{}
	hellos  map[string]bus.Msg // pending hello requests by client
	result  Result
	doneAt  time.Time
	finalCh chan struct{}

	dur  durableState // durable servers only
	news newsTimer    // re-announcement
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
	ep, err := bus.NewEndpoint(cfg.EndpointConfig(), tr)
	if err != nil {
		return nil, fmt.Errorf("aggregator: job %s: %w", cfg.Job, err)
	}
	return &Server{
		cfg: cfg, tr: tr, machine: m, ep: ep,
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

func (s *Server) push(q queued) {
	s.mu.Lock()
	s.queue = append(s.queue, q)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
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
	sub, err := s.tr.Subscribe(s.enqueue, Subjects(j, s.durable())...)
	if err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	defer sub.Unsubscribe()
	if err := s.tr.Flush(ctx); err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	s.cfg.Log.Info().Str("job", j).Str("algo", s.cfg.Round.Algo).Int("rounds", s.cfg.Round.Rounds).
		Int("min_clients", s.cfg.Round.MinClients).Dur("round_timeout", s.cfg.Round.RoundTimeout).
		Float64("deadline_factor", s.cfg.Round.DeadlineFactor).
		Bool("durable", s.durable()).Bool("resumed", s.result.Resumed).Msg("aggregator ready")
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
			return s.snapshot(), fmt.Errorf("aggregator: run: %w", ctx.Err())
		case <-s.notify:
		case <-tick.C:
		}
		if err := s.drain(ctx); err != nil {
			return s.snapshot(), err
		}
		if err := s.step(ctx, Tick{Now: s.cfg.Now()}); err != nil {
			return s.snapshot(), err
		}
		if err := s.maybeReannounce(ctx); err != nil {
			return s.snapshot(), err
		}
		if s.machine.Finished() {
			if s.allFinalIn() || s.cfg.Now().Sub(s.doneAt) > s.cfg.FinalWait {
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
	r.Model, _ = s.machine.Model()
	r.Models = s.machine.Models()
	r.Rounds = uint64(len(r.Closes))
	for _, rc := range r.Closes {
		if rc.Mix != nil {
			r.Mixes = append(r.Mixes, *rc.Mix)
		}
	}
	return r
}

func (s *Server) allFinalIn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.machine.liveClients() {
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
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return nil
		}
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
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
		s.mu.Lock()
		s.hellos[env.From] = m
		s.mu.Unlock()
	case *bus.Metrics:
		s.mu.Lock()
		if b.Final {
			s.result.Final[env.From] = b.Scores
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
	before := s.machine.Round()
	acts := s.machine.Step(ev)
	s.account(acts)
	accepted := s.noteNews(ev, acts)
	if s.durable() {
		_, tick := ev.(Tick)
		s.track(ev, lm, before, accepted, acts)
		if !tick || len(acts) > 0 {
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
	if err := s.resendRound(ctx, ev, acts); err != nil {
		return err
	}
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
		case DeadlineAdapted:
			s.result.Deadlines = append(s.result.Deadlines, x)
		}
	}
}

// updateEvent turns a received update into an event. A released scalar
// (ρ_c, M^c) must be absent or exactly one finite value.
func updateEvent(from string, b *bus.Update, now time.Time) (UpdateIn, error) {
	ev := UpdateIn{Client: from, Round: b.Round, BaseRound: b.BaseRound, Weight: b.Weight,
		Params: b.Params.Floats(), Grad: b.Grad.Floats(), Withheld: b.Withheld, RhoVersion: b.RhoVersion, Now: now}
	if b.TrainNanos > 0 {
		ev.Took = time.Duration(b.TrainNanos)
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
		if x.Mix != nil {
			l = l.Interface("rho_bar", x.Mix.RhoBar).Float64("global_margin", x.Mix.GlobalMargin)
		}
		l.Msg("round closed")
		if s.cfg.OnRound != nil {
			s.cfg.OnRound(x)
		}
	case DeadlineAdapted:
		s.cfg.Log.Info().Uint64("round", x.Round).Str("reason", x.Reason).Dur("budget", x.Budget).
			Time("deadline", x.Deadline).Dur("median", x.Median).Int("samples", x.Samples).Msg("round deadline adapted")
	case Dropped:
		s.cfg.Log.Debug().Str("client", x.Client).Uint64("round", x.Round).Str("reason", x.Reason).Msg("update dropped")
	case Finished:
		s.doneAt = s.cfg.Now()
		s.cfg.Log.Info().Uint64("rounds", x.Rounds).Msg("job finished")
	}
	for _, o := range s.cfg.Outbound(a) {
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
