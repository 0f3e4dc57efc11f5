package aggregator

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
)

// LPSFedServerConfig wires an LPSFedMachine to a transport.
type LPSFedServerConfig struct {
	Job       string
	Round     LPSFedConfig
	InitSeed  uint64          // shared initialisation seed of the federated MLPs (θ̄ at round 0)
	Enrol     map[string]bool // clients allowed to join; nil: any valid id
	TickEvery time.Duration   // deadline checks; default 20ms
	FinalWait time.Duration   // wait for final metrics after done; default 10s
	Now       func() time.Time
	Log       zerolog.Logger
	// OnRound, if set, is called after every close with the decision and
	// the mixing of that round.
	OnRound func(RoundClosed, Mixed)
}

// LPSFedResult is what a finished LPSFed job reports.
type LPSFedResult struct {
	Rounds   uint64
	Closes   []RoundClosed
	Mixes    []Mixed
	Final    map[string]map[string]float64 // client → final scores
	PerRound map[uint64]map[string]map[string]float64
	Rejects  map[string]uint64
	Dropped  map[string]int // by reason
	Kernel   []float64      // the last reference kernel K^R
}

// LPSFedServer is the NATS adapter of LPSFedMachine: it decodes LPSFed's
// messages into events and carries out the actions, publishing K^R in the
// round-open payload and personalized models on gf.<job>.model.<client>.
type LPSFedServer struct {
	cfg     LPSFedServerConfig
	tr      bus.Transport
	machine *LPSFedMachine
	val     *bus.Validator
	seq     uint64

	mu     sync.Mutex
	queue  []bus.Msg
	notify chan struct{}
	hellos map[string]bus.Msg
	result LPSFedResult
	lastRC RoundClosed
	doneAt time.Time
}

// NewLPSFedServer builds a server; Run starts it.
func NewLPSFedServer(cfg LPSFedServerConfig, tr bus.Transport) (*LPSFedServer, error) {
	if !bus.ValidID(cfg.Job) {
		return nil, fmt.Errorf("aggregator: lpsfed server: job id %q is not [a-z0-9-]{1,64}", cfg.Job)
	}
	m, err := NewLPSFedMachine(cfg.Round)
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
	return &LPSFedServer{
		cfg: cfg, tr: tr, machine: m,
		val:    bus.NewValidator(bus.Schema{Job: cfg.Job, MaxRound: uint64(cfg.Round.Rounds), Senders: map[string]bool{}, Enrol: cfg.Enrol}),
		notify: make(chan struct{}, 1),
		hellos: map[string]bus.Msg{},
		result: LPSFedResult{Final: map[string]map[string]float64{}, PerRound: map[uint64]map[string]map[string]float64{}, Dropped: map[string]int{}},
	}, nil
}

// Validator exposes the reject counters.
func (s *LPSFedServer) Validator() *bus.Validator { return s.val }

func (s *LPSFedServer) enqueue(m bus.Msg) {
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Run serves the job until it finishes and the clients reported their
// final scores (or FinalWait passed), or ctx ends.
func (s *LPSFedServer) Run(ctx context.Context) (LPSFedResult, error) {
	j := s.cfg.Job
	sub, err := s.tr.Subscribe(s.enqueue, bus.Subject(j, bus.KindHello, "*"), bus.Subject(j, bus.KindUpdate, "*"),
		bus.Subject(j, bus.KindBye, "*"), bus.Subject(j, bus.KindMetrics, "*"))
	if err != nil {
		return LPSFedResult{}, fmt.Errorf("aggregator: lpsfed run: %w", err)
	}
	defer sub.Unsubscribe()
	if err := s.tr.Flush(ctx); err != nil {
		return LPSFedResult{}, fmt.Errorf("aggregator: lpsfed run: %w", err)
	}
	s.cfg.Log.Info().Str("job", j).Str("algo", s.cfg.Round.Algo).Int("rounds", s.cfg.Round.Rounds).
		Int("min_clients", s.cfg.Round.MinClients).Msg("lpsfed aggregator ready")
	tick := time.NewTicker(s.cfg.TickEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.snapshot(), fmt.Errorf("aggregator: lpsfed run: %w", ctx.Err())
		case <-s.notify:
		case <-tick.C:
		}
		if err := s.drain(ctx); err != nil {
			return s.snapshot(), err
		}
		if err := s.step(ctx, Tick{Now: s.cfg.Now()}); err != nil {
			return s.snapshot(), err
		}
		if s.machine.Finished() && (s.allFinalIn() || s.cfg.Now().Sub(s.doneAt) > s.cfg.FinalWait) {
			return s.snapshot(), nil
		}
	}
}

func (s *LPSFedServer) snapshot() LPSFedResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	r.Rejects = s.val.Rejects()
	r.Rounds = uint64(len(r.Closes))
	r.Kernel, _ = s.machine.Kernel()
	return r
}

func (s *LPSFedServer) allFinalIn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.machine.LiveClients() {
		if _, ok := s.result.Final[id]; !ok {
			return false
		}
	}
	return true
}

func (s *LPSFedServer) drain(ctx context.Context) error {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return nil
		}
		m := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if err := s.handle(ctx, m); err != nil {
			return err
		}
	}
}

// handle turns a received message into an event. A message the validator
// or LPSFed's own checks reject is logged and counted, never fatal.
func (s *LPSFedServer) handle(ctx context.Context, m bus.Msg) error {
	env, body, err := s.val.Open(m.Subject, m.Data)
	if err != nil {
		s.cfg.Log.Warn().Str("subject", m.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
		return nil
	}
	now := s.cfg.Now()
	switch b := body.(type) {
	case *bus.Hello:
		h := b
		s.mu.Lock()
		s.hellos[env.From] = m
		s.mu.Unlock()
		return s.step(ctx, LPSFedJoin{Client: env.From, SchemaHash: h.SchemaHash, NumParams: h.NumParams,
			Weight: float64(h.TrainSize), Users: h.Users, Items: h.Items, Edges: h.Edges, Now: now})
	case *bus.Update:
		u := b
		ev := LPSFedUpdateIn{Client: env.From, Round: u.Round, Weight: u.Weight, Params: u.Params.Floats(), Withheld: u.Withheld, Now: now}
		var ok bool
		if ev.Rho, ev.HasRho, ok = scalar(u.Rho); !ok {
			s.cfg.Log.Warn().Str("from", env.From).Int("len", u.Rho.Len()).Msg("rejected lpsfed update: rho is not one finite value")
			return nil
		}
		ev.RhoVersion = u.RhoVersion
		if ev.Margin, ev.HasMargin, ok = scalar(u.Margin); !ok {
			s.cfg.Log.Warn().Str("from", env.From).Int("len", u.Margin.Len()).Msg("rejected lpsfed update: margin is not one finite value")
			return nil
		}
		return s.step(ctx, ev)
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

// scalar reads a released scalar: absent (empty) or exactly one finite value.
func scalar(v bus.Sensitive) (float64, bool, bool) {
	switch f := v.Floats(); {
	case len(f) == 0:
		return 0, false, true
	case len(f) == 1 && !math.IsNaN(float64(f[0])) && !math.IsInf(float64(f[0]), 0):
		return float64(f[0]), true, true
	}
	return 0, false, false
}

func (s *LPSFedServer) step(ctx context.Context, ev Event) error {
	for _, a := range s.machine.Step(ev) {
		if err := s.act(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func (s *LPSFedServer) publish(ctx context.Context, subject string, kind bus.Kind, round uint64, body any) error {
	s.seq++
	data, err := bus.Seal(bus.Envelope{Job: s.cfg.Job, Kind: kind, From: bus.AggregatorID, Round: round, Seq: s.seq, Time: s.cfg.Now().UnixNano()}, body)
	if err != nil {
		return err
	}
	return s.tr.Publish(ctx, subject, data)
}

func (s *LPSFedServer) act(ctx context.Context, a Action) error {
	j := s.cfg.Job
	switch x := a.(type) {
	case ReplyJoin:
		return s.replyJoin(x)
	case LPSFedOpen:
		ro := &bus.RoundOpen{Round: x.Round, Deadline: x.Deadline.UnixNano(), ModelRound: x.ModelRound}
		if x.Kernel != nil {
			kr := make(bus.Vector, len(x.Kernel))
			for i, v := range x.Kernel {
				kr[i] = float32(v)
			}
			p, err := msgpack.Marshal(&bus.LPSFedRound{Kernel: kr, Version: x.KernelVersion})
			if err != nil {
				return fmt.Errorf("aggregator: lpsfed open round %d: %w", x.Round, err)
			}
			ro.Payload = p
		}
		return s.publish(ctx, bus.Subject(j, bus.KindRound), bus.KindRound, x.Round, ro)
	case PublishPersonal:
		return s.publish(ctx, bus.Subject(j, bus.KindModel, x.To), bus.KindModel, x.Round,
			&bus.Model{Round: x.Round, Params: x.Params, Final: x.Final, Margin: x.Margin, HasMargin: x.HasMargin})
	case RoundClosed:
		s.mu.Lock()
		s.result.Closes = append(s.result.Closes, x)
		s.lastRC = x
		s.mu.Unlock()
		s.cfg.Log.Info().Uint64("round", x.Round).Str("reason", x.Reason).Strs("in", x.In).Strs("late", x.Late).
			Strs("dead", x.Dead).Dur("took", x.Duration).Msg("round closed")
	case Mixed:
		s.mu.Lock()
		s.result.Mixes = append(s.result.Mixes, x)
		rc := s.lastRC
		s.mu.Unlock()
		s.cfg.Log.Debug().Uint64("round", x.Round).Interface("rho", x.Rho).Interface("rho_bar", x.RhoBar).
			Float64("global_margin", x.GlobalMargin).Bool("frozen", x.Frozen).Msg("mixing")
		if s.cfg.OnRound != nil {
			s.cfg.OnRound(rc, x)
		}
	case Dropped:
		s.mu.Lock()
		s.result.Dropped[x.Reason]++
		s.mu.Unlock()
		s.cfg.Log.Warn().Str("client", x.Client).Uint64("round", x.Round).Str("reason", x.Reason).Msg("dropped")
	case Finished:
		s.doneAt = s.cfg.Now()
		s.cfg.Log.Info().Uint64("rounds", x.Rounds).Msg("job finished")
		return s.publish(ctx, bus.Subject(j, bus.KindDone), bus.KindDone, x.Rounds, &bus.Done{Rounds: x.Rounds})
	}
	return nil
}

func (s *LPSFedServer) replyJoin(x ReplyJoin) error {
	s.mu.Lock()
	req, ok := s.hellos[x.Client]
	delete(s.hellos, x.Client)
	s.mu.Unlock()
	if x.Accepted {
		s.val.AllowSender(x.Client)
		s.val.SetNumParams(s.machine.NumParams())
		s.cfg.Log.Info().Str("client", x.Client).Uint64("round", x.Round).Msg("client joined")
	} else {
		s.cfg.Log.Warn().Str("client", x.Client).Str("reason", x.Reason).Msg("join refused")
	}
	if !ok {
		return nil
	}
	s.seq++
	data, err := bus.Seal(bus.Envelope{Job: s.cfg.Job, Kind: bus.KindHello, From: bus.AggregatorID, Seq: s.seq, Time: s.cfg.Now().UnixNano()},
		&bus.HelloReply{Accepted: x.Accepted, Reason: x.Reason, Round: x.Round, Algo: s.cfg.Round.Algo, Rounds: s.cfg.Round.Rounds, InitSeed: s.cfg.InitSeed})
	if err != nil {
		return err
	}
	return s.tr.Respond(req, data)
}
