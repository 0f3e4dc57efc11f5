package aggregator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
)

// ServerConfig wires a Machine to a transport.
type ServerConfig struct {
	Job       string
	Round     Config
	InitSeed  uint64          // shared model initialisation seed sent in hello replies
	Enrol     map[string]bool // clients allowed to join; nil: any valid id
	TickEvery time.Duration   // how often deadlines are checked; default 20ms
	// FinalWait bounds how long the server waits for clients' final metrics
	// after the job is done; default 10s.
	FinalWait time.Duration
	Now       func() time.Time // default time.Now
	Log       zerolog.Logger
	// OnRound, if set, is called with every close decision (progress output).
	OnRound func(RoundClosed)
}

// Result is what a finished job reports.
type Result struct {
	Rounds   uint64
	Closes   []RoundClosed
	Final    map[string]map[string]float64 // client -> final scores
	PerRound map[uint64]map[string]map[string]float64
	Rejects  map[string]uint64
	Dropped  map[string]int // by reason
	Model    []float32
}

// Server is the aggregator's NATS adapter: it feeds Machine with events
// decoded from the transport and carries out its actions.
type Server struct {
	cfg     ServerConfig
	tr      bus.Transport
	machine *Machine
	val     *bus.Validator
	seq     uint64

	mu      sync.Mutex
	queue   []queued
	notify  chan struct{}
	hellos  map[string]bus.Msg // pending hello requests by client
	result  Result
	doneAt  time.Time
	finalCh chan struct{}
}

type queued struct {
	msg bus.Msg
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
	return &Server{
		cfg: cfg, tr: tr, machine: m,
		val:    bus.NewValidator(bus.Schema{Job: cfg.Job, MaxRound: uint64(cfg.Round.Rounds), Senders: map[string]bool{}, Enrol: cfg.Enrol}),
		notify: make(chan struct{}, 1),
		hellos: map[string]bus.Msg{},
		result: Result{
			Final:    map[string]map[string]float64{},
			PerRound: map[uint64]map[string]map[string]float64{},
			Dropped:  map[string]int{},
		},
		finalCh: make(chan struct{}),
	}, nil
}

// Validator exposes the reject counters.
func (s *Server) Validator() *bus.Validator { return s.val }

func (s *Server) enqueue(m bus.Msg) {
	s.mu.Lock()
	s.queue = append(s.queue, queued{msg: m})
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
	sub, err := s.tr.Subscribe(s.enqueue,
		bus.Subject(j, bus.KindHello, "*"), bus.Subject(j, bus.KindUpdate, "*"),
		bus.Subject(j, bus.KindBye, "*"), bus.Subject(j, bus.KindMetrics, "*"))
	if err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	defer sub.Unsubscribe()
	if err := s.tr.Flush(ctx); err != nil {
		return Result{}, fmt.Errorf("aggregator: run: %w", err)
	}
	s.cfg.Log.Info().Str("job", j).Str("algo", s.cfg.Round.Algo).Int("rounds", s.cfg.Round.Rounds).
		Int("min_clients", s.cfg.Round.MinClients).Dur("round_timeout", s.cfg.Round.RoundTimeout).Msg("aggregator ready")
	tick := time.NewTicker(s.cfg.TickEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.snapshot(), fmt.Errorf("aggregator: run: %w", ctx.Err())
		case <-s.notify:
		case <-tick.C:
		}
		s.drain(ctx)
		if err := s.step(ctx, Tick{Now: s.cfg.Now()}); err != nil {
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
	r.Rejects = s.val.Rejects()
	r.Model, _ = s.machine.Model()
	r.Rounds = uint64(len(r.Closes))
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

func (s *Server) drain(ctx context.Context) {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if err := s.handle(ctx, q.msg); err != nil {
			s.cfg.Log.Error().Err(err).Msg("aggregator: handling message")
		}
	}
}

func (s *Server) handle(ctx context.Context, m bus.Msg) error {
	env, body, err := s.val.Open(m.Subject, m.Data)
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
		return s.step(ctx, Join{Client: env.From, SchemaHash: b.SchemaHash, NumParams: b.NumParams, Weight: float64(b.TrainSize), Now: now})
	case *bus.Update:
		return s.step(ctx, UpdateIn{Client: env.From, Round: b.Round, BaseRound: b.BaseRound, Weight: b.Weight,
			Params: b.Params.Floats(), Grad: b.Grad.Floats(), Withheld: b.Withheld, Now: now})
	case *bus.Bye:
		return s.step(ctx, Leave{Client: env.From, Now: now})
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
	}
	return nil
}

func (s *Server) step(ctx context.Context, ev Event) error {
	for _, a := range s.machine.Step(ev) {
		if err := s.act(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) publish(ctx context.Context, subject string, kind bus.Kind, round uint64, body any) error {
	s.seq++
	data, err := bus.Seal(bus.Envelope{Job: s.cfg.Job, Kind: kind, From: bus.AggregatorID, Round: round, Seq: s.seq, Time: s.cfg.Now().UnixNano()}, body)
	if err != nil {
		return err
	}
	return s.tr.Publish(ctx, subject, data)
}

func (s *Server) act(ctx context.Context, a Action) error {
	j := s.cfg.Job
	switch x := a.(type) {
	case ReplyJoin:
		s.mu.Lock()
		req, ok := s.hellos[x.Client]
		delete(s.hellos, x.Client)
		s.mu.Unlock()
		if x.Accepted {
			s.val.AllowSender(x.Client)
			if s.machine.numParams > 0 {
				s.val.SetNumParams(s.machine.numParams)
			}
			s.cfg.Log.Info().Str("client", x.Client).Uint64("round", x.Round).Msg("client joined")
		} else {
			s.cfg.Log.Warn().Str("client", x.Client).Str("reason", x.Reason).Msg("join refused")
		}
		if !ok {
			return nil
		}
		s.seq++
		data, err := bus.Seal(bus.Envelope{Job: j, Kind: bus.KindHello, From: bus.AggregatorID, Seq: s.seq, Time: s.cfg.Now().UnixNano()},
			&bus.HelloReply{Accepted: x.Accepted, Reason: x.Reason, Round: x.Round, Algo: s.cfg.Round.Algo, Rounds: s.cfg.Round.Rounds, InitSeed: s.cfg.InitSeed})
		if err != nil {
			return err
		}
		return s.tr.Respond(req, data)
	case OpenRound:
		s.cfg.Log.Debug().Uint64("round", x.Round).Time("deadline", x.Deadline).Msg("round open")
		return s.publish(ctx, bus.Subject(j, bus.KindRound), bus.KindRound, x.Round,
			&bus.RoundOpen{Round: x.Round, Deadline: x.Deadline.UnixNano(), ModelRound: x.ModelRound})
	case PublishModel:
		to := "all"
		if x.To != "" {
			to = x.To
		}
		return s.publish(ctx, bus.Subject(j, bus.KindModel, to), bus.KindModel, x.Round,
			&bus.Model{Round: x.Round, Params: x.Params, Grad: x.Grad, Final: x.Final})
	case RoundClosed:
		s.mu.Lock()
		s.result.Closes = append(s.result.Closes, x)
		s.mu.Unlock()
		s.cfg.Log.Info().Uint64("round", x.Round).Str("reason", x.Reason).Strs("in", x.In).Strs("late", x.Late).
			Strs("stale", x.Stale).Strs("dead", x.Dead).Dur("took", x.Duration).Msg("round closed")
		if s.cfg.OnRound != nil {
			s.cfg.OnRound(x)
		}
	case Dropped:
		s.mu.Lock()
		s.result.Dropped[x.Reason]++
		s.mu.Unlock()
		s.cfg.Log.Debug().Str("client", x.Client).Uint64("round", x.Round).Str("reason", x.Reason).Msg("update dropped")
	case Finished:
		s.doneAt = s.cfg.Now()
		s.cfg.Log.Info().Uint64("rounds", x.Rounds).Msg("job finished")
		return s.publish(ctx, bus.Subject(j, bus.KindDone), bus.KindDone, x.Rounds, &bus.Done{Rounds: x.Rounds})
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
