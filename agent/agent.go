package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/inbox"
	"graphfed/learner"
	"graphfed/privacy"
)

// Config configures one agent.
type Config struct {
	Job         string
	Client      string
	Algo        string // the algorithm the learner was built for (MachineConfig.Algo); empty: any
	LocalEpochs int    // per round; default 1
	// EvalEvery scores the model a round starts from every this many rounds
	// (round 1, 1+EvalEvery, ...); 0 means 1, negative never. The final
	// scores are always computed. Frequent exchange (small K) makes
	// per-round scoring the dominant cost otherwise.
	EvalEvery  int
	HelloRetry time.Duration // between hello attempts; default 1s
	Slowdown   time.Duration // extra delay before each round's training, to simulate a slow bank
	// SlowFactor > 1 makes the bank that many times slower than its
	// hardware: after each round's training (and releases) it waits
	// (SlowFactor−1) times the time they took before publishing, so the
	// delay scales with the work as a slower machine's would.
	SlowFactor float64
	Now        func() time.Time // default time.Now
	Log        zerolog.Logger
	// ModelSigma and ModelClip are the Gaussian noise and L2 clip norm the
	// privacy gate applies to every model update (CE-FedGNN's σ1 and model
	// clip). GradSigma is σ2 on the gradient estimator; EmbSigma is σ0 on
	// normalized boundary embeddings (CE-FedGNN), negative to turn the
	// exchange off (the "w/o exchange" ablation); MarginSigma is σ on
	// LPSFed's scalars. Zero picks the defaults.
	ModelSigma  float64
	ModelClip   float64
	GradSigma   float64
	EmbSigma    float64
	MarginSigma float64
	// DescriptorSigma is σ on a FedGSP learner's descriptor rows
	// (MachineConfig.DescriptorSigma); zero: DefaultDescriptorSigma.
	DescriptorSigma float64
	// Keyring, when set, requires every envelope the agent receives (the
	// aggregator's rounds, models, done and hello reply, the peers'
	// embeddings) to carry its sender's valid signature; others are
	// rejected with the reason "signature".
	Keyring *bus.Keyring
	// Signer, when set, signs every envelope the agent sends; it must sign
	// as Client, with the key the keyring lists for it.
	Signer *bus.Signer
	// Observer, if set, sees every step of the machine (metrics,
	// observer.go).
	Observer Observer
	// Inbox bounds what waits for the agent's loop, per sender (inbox.go);
	// zero: derived from the server's payload limit (InboxLimitsFor).
	Inbox InboxLimits
	// SecAgg, with a Signer, takes part in the secure aggregation of the
	// rounds that announce one (machine_secure.go): the agent subscribes
	// to the protocol's subjects.
	SecAgg SecAggConfig
}

// Result is what an agent reports when the job is done.
type Result struct {
	Client  string
	Rounds  int                // rounds it trained
	Final   map[string]float64 // scores of the final model on local data
	Rejects map[string]uint64
	// Inbox is what the agent's inbox received and dropped, by sender.
	Inbox InboxReport
}

// Agent runs one client's side of a job over a transport: it is the driver
// of a Machine (etcd raft's Node around its RawNode). It subscribes,
// queues what arrives, opens it through its bus.Endpoint (which owns
// sequence numbers, signing and validation), turns it into machine events,
// and carries the machine's actions out: publishing, hello requests and
// their retries, and a slow bank's sleeps.
type Agent struct {
	cfg Config
	ep  *bus.Endpoint
	m   *Machine

	runs   RunGuard
	joined bool // a hello was accepted: leaving says goodbye
	// secSpent is the time of the machine's secure-aggregation steps.
	secSpent time.Duration

	mu         sync.Mutex
	inbox      *inbox.Queue[bus.Msg] // bounded per sender, in arrival order (inbox.go)
	neighbours map[string]bool       // senders with an inbox allowance of their own
	notify     chan struct{}
	interrupt  context.CancelCauseFunc // ends the running Run (a stop notice)
}

// New builds an agent; Run starts it. Every value the agent publishes that
// derives from its data passes through gate, which must be built over the
// agent's durable ledger: the machine recovers the rounds it released from
// it.
func New(cfg Config, tr bus.Transport, l learner.Learner, gate *privacy.Gate) (*Agent, error) {
	if gate == nil {
		return nil, fmt.Errorf("agent %s: no privacy gate", cfg.Client)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HelloRetry <= 0 {
		cfg.HelloRetry = time.Second
	}
	m, err := NewMachine(MachineConfig{Job: cfg.Job, Client: cfg.Client, Algo: cfg.Algo, LocalEpochs: cfg.LocalEpochs, EvalEvery: cfg.EvalEvery,
		HelloRetry: cfg.HelloRetry, ModelSigma: cfg.ModelSigma, ModelClip: cfg.ModelClip, GradSigma: cfg.GradSigma,
		EmbSigma: cfg.EmbSigma, MarginSigma: cfg.MarginSigma, DescriptorSigma: cfg.DescriptorSigma, Gate: gate, SecAgg: cfg.SecAgg}, l)
	if err != nil {
		return nil, err
	}
	ep, err := bus.NewEndpoint(cfg.EndpointConfig(l.NumParams()), tr)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", cfg.Client, err)
	}
	lim, neighbours := inboxFor(cfg, tr, l)
	a := &Agent{cfg: cfg, ep: ep, m: m, notify: make(chan struct{}, 1), inbox: newInbox(lim, neighbours),
		neighbours: map[string]bool{}}
	for _, n := range neighbours {
		a.neighbours[n] = true
	}
	return a, nil
}

// Run joins the job, trains round by round and returns when the aggregator
// says the job is done or ctx ends. When the aggregator stops the job
// early, Run returns with a *JobStopped error once its current step (a
// round's training and publication) is done.
// When ctx ends, an agent that had joined says goodbye (a bye with the
// reason), so that the open round does not wait for it until its deadline.
func (a *Agent) Run(parent context.Context) (Result, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	a.mu.Lock()
	a.interrupt = cancel
	a.mu.Unlock()
	res, err := a.run(parent, ctx)
	var stopped *JobStopped
	switch {
	case errors.As(context.Cause(ctx), &stopped), errors.As(err, &stopped):
		a.cfg.Log.Warn().Str("client", a.cfg.Client).Uint64("rounds", stopped.Rounds).Str("reason", stopped.Reason).
			Msg("the aggregator stopped the job: leaving")
		return a.result(nil), stopped
	case parent.Err() != nil && a.joined:
		a.goodbye(parent)
	case err != nil:
		// Said here, when it happens: a simulation of many agents reports
		// their errors only once the job ends.
		a.cfg.Log.Error().Str("client", a.cfg.Client).Err(err).Msg("agent stopped")
	}
	return res, err
}

// run serves the job: steps run under ctx, waits for messages under
// waitCtx, which a stop notice also ends. A step is never cut short by the
// notice: between a release and its publication the update would be lost
// (the ledger says the round was trained, so a resumed job would wait for
// it until the deadline); the agent leaves once the step is done.
func (a *Agent) run(ctx, waitCtx context.Context) (Result, error) {
	j, c := a.cfg.Job, a.cfg.Client
	// Subscribe before saying hello: our join may be the one that opens round 1.
	subjects := Subjects(j, c)
	if a.cfg.SecAgg.Signer != nil {
		subjects = append(subjects, bus.SecAggSubjects(j, c)...)
	}
	sub, err := a.ep.Transport().Subscribe(a.enqueue, subjects...)
	if err != nil {
		return Result{}, fmt.Errorf("agent %s: %w", c, err)
	}
	defer sub.Unsubscribe()
	if err := bus.AwaitSubscriptions(ctx, a.ep.Transport(), func(err error) {
		a.cfg.Log.Warn().Str("client", c).Err(err).Msg("the server has not confirmed the agent's subscriptions yet; waiting")
	}); err != nil {
		return Result{}, fmt.Errorf("agent %s: %w", c, err)
	}
	if res, done, err := a.step(ctx, Start{Now: a.cfg.Now()}); done || err != nil {
		return res, err
	}
	for {
		msg, woke, err := a.nextOrWake(waitCtx)
		if err != nil {
			return a.result(nil), fmt.Errorf("agent %s: %w", c, err)
		}
		if woke {
			if res, done, err := a.step(ctx, MachineTick{Now: a.cfg.Now()}); done || err != nil {
				return res, err
			}
			continue
		}
		ev, stop := a.event(msg)
		if stop != nil {
			return a.result(nil), stop
		}
		if ev == nil {
			continue
		}
		if res, done, err := a.step(ctx, ev); done || err != nil {
			return res, err
		}
	}
}

// event opens a received message and turns it into a machine event; nil
// for a rejected one, or for the aggregator's notice that it stopped the
// job (stop).
func (a *Agent) event(msg bus.Msg) (MachineEvent, *JobStopped) {
	env, body, err := a.ep.Open(msg)
	if err == nil {
		prev := a.runs.Run()
		err = a.runs.Check(body, true)
		if err != nil {
			a.ep.Validator().Reject(err)
		} else if run := a.runs.Run(); prev != "" && run != prev {
			a.cfg.Log.Info().Str("client", a.cfg.Client).Str("run", run).Str("ended", prev).
				Msg("following the run that took the job over from the agent's")
		}
	}
	if err != nil {
		a.cfg.Log.Warn().Str("subject", msg.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
		return nil, nil
	}
	if d, ok := body.(*bus.Done); ok && d.Stopped != "" {
		return nil, &JobStopped{Client: a.cfg.Client, Reason: d.Stopped, Rounds: d.Rounds}
	}
	ev := EventOf(env, body, a.cfg.Now())
	if ro, ok := ev.(RoundOpened); ok {
		ro.Superseded = a.newerRoundQueued(ro.Round)
		return ro, nil
	}
	return ev, nil
}

// step feeds ev to the machine and carries out its actions, and the
// actions of the events they lead to (a hello's reply). done says the
// agent is finished (the result is final).
func (a *Agent) step(ctx context.Context, ev MachineEvent) (res Result, done bool, err error) {
	pending := []MachineEvent{ev}
	for len(pending) > 0 {
		ev := pending[0]
		pending = pending[1:]
		// The round's time on this side, as the aggregator's adaptive
		// deadline wants it (bus.Update.TrainNanos): from taking the
		// event up to sending the update, a slow bank's delays included.
		began := time.Now()
		// A slow bank's fixed delay falls before the training, so that a
		// crash during it finds nothing released and the round retrained.
		if ro, ok := ev.(RoundOpened); ok && a.cfg.Slowdown > 0 && a.m.Trains(ro) {
			d := a.cfg.Slowdown
			if err := a.sleep(ctx, &d); err != nil {
				return a.result(nil), true, fmt.Errorf("agent %s: %w", a.cfg.Client, err)
			}
		}
		stepped := time.Now()
		acts, err := a.m.Step(stepContext(ctx, ev), ev)
		if err != nil {
			return a.result(nil), true, err
		}
		switch ev.(type) {
		case SecAggIn, MachineTick:
			// The protocol's steps (sharing, masking, unmasking); the
			// keys and the encoding ride in the round's training step.
			a.secSpent += time.Since(stepped)
		}
		// A received model the machine refused for its values counts with
		// the agent's rejects, charged to the aggregator that signed it.
		for _, reason := range a.m.TakeBadReasons() {
			a.ep.Validator().RejectFrom(bus.AggregatorID, &bus.RejectError{Reason: reason,
				Err: errors.New("a received model is outside what the job can produce")})
		}
		if a.cfg.Observer != nil {
			a.cfg.Observer.Stepped(ev, acts, time.Since(stepped))
		}
		slow := a.slowWait(time.Since(stepped))
		for _, act := range acts {
			switch x := act.(type) {
			case SendHello:
				next, err := a.hello(ctx, x.Hello)
				if err != nil {
					return a.result(nil), true, err
				}
				pending = append(pending, next)
			case Refused:
				return a.result(nil), true, fmt.Errorf("agent %s: join refused: %s", a.cfg.Client, x.Reason)
			case PublishMetrics:
				err = a.send(ctx, x)
			case PublishEmbeddings:
				if err = a.sleep(ctx, &slow); err == nil {
					err = a.send(ctx, x)
				}
			case PublishUpdate:
				if err = a.sleep(ctx, &slow); err == nil {
					x.Update.TrainNanos = max(1, time.Since(began).Nanoseconds())
					err = a.send(ctx, x)
				}
			case PublishSecAgg:
				err = a.send(ctx, x)
			case BudgetSpent:
				a.cfg.Log.Warn().Err(x.Err).Uint64("round", x.Round).Str("channel", string(x.Channel)).
					Msg("privacy budget spent: channel withheld from now on")
			case Note:
				e := a.cfg.Log.Debug()
				if x.Warn {
					e = a.cfg.Log.Warn()
				}
				e.Err(x.Err).Uint64("round", x.Round).Msg(x.Msg)
			case Finished:
				return a.finish(ctx, x)
			}
			if err != nil {
				return a.result(nil), true, fmt.Errorf("agent %s: %w", a.cfg.Client, err)
			}
		}
	}
	return Result{}, false, nil
}

// hello asks to join and waits up to the machine's HelloWait (HelloRetry,
// backing off while unanswered) for the reply, which
// arrives on the agent's inbox outside the validator's subjects: the
// Endpoint checks job, kind, the aggregator as sender and, with a keyring,
// its signature. An unanswered hello becomes a tick, at which the machine
// asks again.
func (a *Agent) hello(ctx context.Context, h bus.Hello) (MachineEvent, error) {
	c := a.cfg.Client
	rctx, cancel := context.WithTimeout(ctx, a.m.HelloWait())
	defer cancel()
	o := Outbound(a.cfg.Job, c, SendHello{Hello: h})[0]
	reply, err := a.ep.Request(rctx, o.Subject, o.Kind, o.Body)
	if err == nil {
		var hr bus.HelloReply
		if _, err := a.ep.OpenFrom(reply, bus.KindHello, bus.AggregatorID, &hr); err != nil {
			// A reply that does not open (not an envelope, not the
			// aggregator's, forged) is no answer: counted, logged and the
			// hello repeated. An agent never dies of what it receives; a
			// stream of its own account capturing its hello subject
			// answered with a JetStream acknowledgement once, and the agent
			// used to stop.
			a.ep.Validator().Reject(err)
			a.cfg.Log.Warn().Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected hello reply")
			return a.unanswered(ctx, rctx)
		}
		if hr.Accepted {
			if err := a.runs.Admitted(hr.Run, hr.Ended); err != nil {
				// A stale reply: treated as none, the hello is repeated.
				a.ep.Validator().Reject(err)
				a.cfg.Log.Warn().Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected hello reply")
				return a.unanswered(ctx, rctx)
			}
			a.joined = true
			a.cfg.Log.Info().Str("client", c).Str("algo", hr.Algo).Uint64("round", hr.Round).Str("run", hr.Run).Msg("joined")
		}
		// The server announces its open round again after a join, with the
		// model to start from.
		return JoinReplyOf(hr, a.cfg.Now()), nil
	}
	a.cfg.Log.Debug().Err(err).Msg("hello unanswered, retrying")
	return a.unanswered(ctx, rctx)
}

// unanswered waits out the hello's retry period (rctx) and turns it into
// the tick at which the machine asks again.
func (a *Agent) unanswered(ctx, rctx context.Context) (MachineEvent, error) {
	c := a.cfg.Client
	<-rctx.Done() // "no responders" fails at once: wait out the retry period
	if ctx.Err() != nil {
		return nil, fmt.Errorf("agent %s: hello: %w", c, ctx.Err())
	}
	now := a.cfg.Now()
	if w := a.m.NextWake(); now.Before(w) {
		now = w // HelloWait has passed, whatever an injected clock says
	}
	return MachineTick{Now: now}, nil
}

// finish publishes the final scores and says bye.
func (a *Agent) finish(ctx context.Context, f Finished) (Result, bool, error) {
	c := a.cfg.Client
	if a.cfg.SecAgg.Signer != nil {
		f.Scores["secagg_seconds"] = a.secSpent.Seconds()
	}
	err := errors.Join(a.send(ctx, f), a.ep.Transport().Flush(ctx))
	shown, grid := f.Scores, 0
	if sl, ok := a.m.learner.(learner.ScoreLogger); ok {
		shown, grid = sl.LogScores(f.Scores)
	}
	a.cfg.Log.Info().Str("client", c).Int("rounds", a.m.Rounds()).Interface("scores", shown).Int("grid_counts", grid).Msg("finished")
	return a.result(f.Scores), true, err
}

// send publishes what act sends (Outbound), through the endpoint.
func (a *Agent) send(ctx context.Context, act MachineAction) error {
	var errs []error
	for _, o := range Outbound(a.cfg.Job, a.cfg.Client, act) {
		errs = append(errs, a.ep.Publish(ctx, o.Subject, o.Kind, o.Round, o.Body))
	}
	return errors.Join(errs...)
}

func (a *Agent) result(final map[string]float64) Result {
	return Result{Client: a.cfg.Client, Rounds: a.m.Rounds(), Final: final, Rejects: a.ep.Validator().Rejects(),
		Inbox: a.InboxReport()}
}
