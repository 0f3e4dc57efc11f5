package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
	"graphfed/privacy"
)

// Config configures one agent.
type Config struct {
	Job         string
	Client      string
	LocalEpochs int // per round; default 1
	// EvalEvery scores the model a round starts from every this many rounds
	// (round 1, 1+EvalEvery, ...); default 1. The final scores are always
	// computed. Frequent exchange (small K) makes per-round scoring the
	// dominant cost otherwise.
	EvalEvery  int
	HelloRetry time.Duration // between hello attempts; default 1s
	Slowdown   time.Duration // extra delay per round, to simulate a slow bank
	// SlowFactor > 1 makes the bank that many times slower than its
	// hardware: after each round's training it waits (SlowFactor−1) times
	// the training time, so the delay scales with the work as a slower
	// machine's would.
	SlowFactor float64
	Now        func() time.Time // default time.Now
	Log        zerolog.Logger
	// ModelSigma and ModelClip are the Gaussian noise and L2 clip norm the
	// privacy gate applies to every model update (CE-FedGNN's σ1 and model
	// clip).
	ModelSigma float64
	ModelClip  float64
	// GradSigma is σ2 on the gradient estimator; EmbSigma is σ0 on
	// normalized boundary embeddings (CE-FedGNN). A negative EmbSigma turns
	// the embedding exchange off (the "w/o exchange" ablation).
	GradSigma float64
	EmbSigma  float64
	// Keyring, when set, requires every envelope the agent receives (the
	// aggregator's rounds, models, done and hello reply, the peers'
	// embeddings) to carry its sender's valid signature; others are
	// rejected with the reason "signature".
	Keyring *bus.Keyring
	// Signer, when set, signs every envelope the agent sends; it must sign
	// as Client, with the key the keyring lists for it.
	Signer *bus.Signer
}

// Defaults for the model channel. σ1 is CE-FedGNN's 1e-3. Its model clip
// of 15 suits its small AML model but binds on a Cora GCN (1433×16 first
// layer), where clipping the whole parameter vector every round shrinks the
// model towards zero (FedAvg on Cora/Louvain-10: 0.43 at 15, 0.59 at 50 or
// more); 100 leaves common models unclipped. A binding clip is logged.
const (
	DefaultModelSigma = 1e-3
	DefaultModelClip  = 100
)

// Result is what an agent reports when the job is done.
type Result struct {
	Client  string
	Rounds  int                // rounds it trained
	Final   map[string]float64 // scores of the final model on local data
	Rejects map[string]uint64
}

// Agent runs one client's side of a job.
type Agent struct {
	cfg     Config
	tr      bus.Transport
	learner Learner
	gate    *privacy.Gate
	val     *bus.Validator
	seq     uint64
	// withheld is set once the gate refused the model channel for budget:
	// from then on the agent trains but publishes no parameters.
	withheld   bool
	clipWarned bool
	// lastReleased holds the inputs of the last exchange's releases,
	// before normalization and noise, for calibration;
	// embDim is their width.
	lastReleased []float32
	embDim       int
	calib        *privacy.Calibration

	mu     sync.Mutex
	queue  []bus.Msg
	notify chan struct{}

	algo       string
	model      []float32 // latest global model
	grad       []float32 // latest averaged gradient estimator
	modelRound uint64
	trained    uint64 // last round trained
	rounds     int
}

// New builds an agent; Run starts it. Every value the agent publishes that
// derives from its data passes through gate.
func New(cfg Config, tr bus.Transport, l Learner, gate *privacy.Gate) (*Agent, error) {
	if !bus.ValidID(cfg.Job) || !bus.ValidID(cfg.Client) || cfg.Client == bus.AggregatorID || cfg.Client == "all" {
		return nil, fmt.Errorf("agent: job %q or client %q is not a valid id", cfg.Job, cfg.Client)
	}
	if gate == nil {
		return nil, fmt.Errorf("agent %s: no privacy gate", cfg.Client)
	}
	if cfg.ModelSigma == 0 {
		cfg.ModelSigma = DefaultModelSigma
	}
	if cfg.ModelClip == 0 {
		cfg.ModelClip = DefaultModelClip
	}
	if cfg.GradSigma == 0 {
		cfg.GradSigma = DefaultGradSigma
	}
	if cfg.EmbSigma == 0 {
		cfg.EmbSigma = DefaultEmbSigma
	}
	if cfg.LocalEpochs <= 0 {
		cfg.LocalEpochs = 1
	}
	if cfg.HelloRetry == 0 {
		cfg.HelloRetry = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := checkSigner(cfg.Signer, cfg.Keyring, cfg.Client); err != nil {
		return nil, fmt.Errorf("agent %s: %w", cfg.Client, err)
	}
	return &Agent{
		cfg: cfg, tr: tr, learner: l, gate: gate,
		val:    bus.NewValidator(bus.Schema{Job: cfg.Job, NumParams: l.NumParams(), Keyring: cfg.Keyring}),
		notify: make(chan struct{}, 1),
	}, nil
}

func (a *Agent) enqueue(m bus.Msg) {
	a.mu.Lock()
	a.queue = append(a.queue, m)
	a.mu.Unlock()
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

func (a *Agent) next(ctx context.Context) (bus.Msg, error) {
	for {
		a.mu.Lock()
		if len(a.queue) > 0 {
			m := a.queue[0]
			a.queue = a.queue[1:]
			a.mu.Unlock()
			return m, nil
		}
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return bus.Msg{}, ctx.Err()
		case <-a.notify:
		}
	}
}

// newerRoundQueued reports whether a round after r has opened while the
// agent was busy.
func (a *Agent) newerRoundQueued(r uint64) bool {
	subj := bus.Subject(a.cfg.Job, bus.KindRound)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.queue {
		if m.Subject != subj {
			continue
		}
		// Only the aggregator's rounds count: a forged newer round would
		// otherwise make the agent skip the real one.
		if env, err := bus.Open(m.Data); err == nil && env.Kind == bus.KindRound && env.Round > r && a.fromAggregator(&env) {
			return true
		}
	}
	return false
}

// fromAggregator reports whether env is the job's aggregator's, signed
// by it when the agent has a keyring. It vets envelopes read ahead of the
// validator, which checks them again when their turn comes.
func (a *Agent) fromAggregator(env *bus.Envelope) bool {
	if env.Job != a.cfg.Job || env.From != bus.AggregatorID {
		return false
	}
	return a.cfg.Keyring == nil || a.cfg.Keyring.Verify(env) == nil
}

// slowWait is the extra time a SlowFactor-times slower bank would have
// needed for training that took took.
func (a *Agent) slowWait(took time.Duration) time.Duration {
	if a.cfg.SlowFactor <= 1 {
		return 0
	}
	return time.Duration(float64(took) * (a.cfg.SlowFactor - 1))
}

// checkSigner refuses a signer that does not sign as id, or whose key is
// not the one the keyring lists for id: every envelope it signed would be
// rejected as "signature" by the receivers.
func checkSigner(sg *bus.Signer, k *bus.Keyring, id string) error {
	if sg == nil {
		return nil
	}
	if sg.ID() != id {
		return fmt.Errorf("the signer signs as %s", sg.ID())
	}
	if k != nil {
		if p, ok := k.Party(id); !ok || p.PublicKey != sg.PublicKey() {
			return fmt.Errorf("the keyring does not list the signer's key %s for %s", sg.PublicKey(), id)
		}
	}
	return nil
}

// seal encodes an envelope, signed when the agent has a signer.
func (a *Agent) seal(env bus.Envelope, body any) ([]byte, error) {
	if a.cfg.Signer != nil {
		return a.cfg.Signer.Seal(env, body)
	}
	return bus.Seal(env, body)
}

func (a *Agent) publish(ctx context.Context, subject string, kind bus.Kind, round uint64, body any) error {
	a.seq++
	data, err := a.seal(bus.Envelope{Job: a.cfg.Job, Kind: kind, From: a.cfg.Client, Round: round, Seq: a.seq, Time: a.cfg.Now().UnixNano()}, body)
	if err != nil {
		return err
	}
	return a.tr.Publish(ctx, subject, data)
}

// Run joins the job, trains round by round and returns when the aggregator
// says the job is done or ctx ends.
func (a *Agent) Run(ctx context.Context) (Result, error) {
	j, c := a.cfg.Job, a.cfg.Client
	// Subscribe before saying hello: our join may be the one that opens round 1.
	sub, err := a.tr.Subscribe(a.enqueue, bus.Subject(j, bus.KindRound), bus.Subject(j, bus.KindModel, "all"),
		bus.Subject(j, bus.KindModel, c), bus.Subject(j, bus.KindDone), bus.Subject(j, bus.KindEmb, "*", c))
	if err != nil {
		return Result{}, fmt.Errorf("agent %s: %w", c, err)
	}
	defer sub.Unsubscribe()
	if err := a.tr.Flush(ctx); err != nil {
		return Result{}, fmt.Errorf("agent %s: %w", c, err)
	}
	if err := a.hello(ctx); err != nil {
		return Result{}, err
	}
	for {
		m, err := a.next(ctx)
		if err != nil {
			return a.result(nil), fmt.Errorf("agent %s: %w", c, err)
		}
		env, body, err := a.val.Open(m.Subject, m.Data)
		if err != nil {
			a.cfg.Log.Warn().Str("subject", m.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
			continue
		}
		switch b := body.(type) {
		case *bus.Model:
			if len(b.Params) > 0 && b.Round >= a.modelRound {
				a.model, a.grad, a.modelRound = b.Params, b.Grad, b.Round
			}
		case *bus.Embeddings:
			a.receive(env.From, b)
		case *bus.RoundOpen:
			if a.newerRoundQueued(b.Round) {
				// A bank that fell behind trains for the newest round only;
				// working through every missed round would make each update
				// staler than the last.
				a.cfg.Log.Debug().Uint64("round", b.Round).Msg("skipping superseded round")
				continue
			}
			if err := a.train(ctx, b); err != nil {
				return a.result(nil), err
			}
		case *bus.Done:
			return a.finish(ctx)
		}
	}
}

func (a *Agent) hello(ctx context.Context) error {
	j, c := a.cfg.Job, a.cfg.Client
	a.seq++
	data, err := a.seal(bus.Envelope{Job: j, Kind: bus.KindHello, From: c, Seq: a.seq, Time: a.cfg.Now().UnixNano()},
		&bus.Hello{SchemaHash: a.learner.SchemaHash(), NumParams: a.learner.NumParams(), TrainSize: a.learner.TrainSize()})
	if err != nil {
		return err
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, a.cfg.HelloRetry)
		reply, err := a.tr.Request(rctx, bus.Subject(j, bus.KindHello, c), data)
		cancel()
		if err == nil {
			env, err := a.openHelloReply(reply)
			if err != nil {
				return fmt.Errorf("agent %s: hello reply: %w", c, err)
			}
			var hr bus.HelloReply
			if err := env.UnmarshalBody(&hr); err != nil {
				return fmt.Errorf("agent %s: hello reply: %w", c, err)
			}
			if !hr.Accepted {
				return fmt.Errorf("agent %s: join refused: %s", c, hr.Reason)
			}
			a.algo = hr.Algo
			a.learner.Init(hr.InitSeed)
			a.cfg.Log.Info().Str("client", c).Str("algo", hr.Algo).Uint64("round", hr.Round).Msg("joined")
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("agent %s: hello: %w", c, ctx.Err())
		}
		a.cfg.Log.Debug().Err(err).Msg("hello unanswered, retrying")
	}
}

// openHelloReply decodes the aggregator's answer to a hello. It arrives on
// the agent's inbox, outside the validator's subjects, so the checks that
// matter are made here: job, kind, the aggregator as sender and, with a
// keyring, its signature.
func (a *Agent) openHelloReply(data []byte) (bus.Envelope, error) {
	env, err := bus.Open(data)
	if err != nil {
		return bus.Envelope{}, err
	}
	if env.Job != a.cfg.Job || env.Kind != bus.KindHello || env.From != bus.AggregatorID {
		return bus.Envelope{}, &bus.RejectError{Reason: bus.ReasonSubject,
			Err: fmt.Errorf("a %s of job %q from %q, want the aggregator's hello of job %s", env.Kind, env.Job, env.From, a.cfg.Job)}
	}
	if a.cfg.Keyring != nil {
		if err := a.cfg.Keyring.Verify(&env); err != nil {
			return bus.Envelope{}, &bus.RejectError{Reason: bus.ReasonSignature, Err: err}
		}
	}
	return env, nil
}

func (a *Agent) train(ctx context.Context, r *bus.RoundOpen) error {
	if r.Round <= a.trained {
		return nil
	}
	shares := a.algo != "local"
	base := uint64(0)
	if shares && r.ModelRound > 0 && a.model != nil {
		if a.modelRound != r.ModelRound {
			a.cfg.Log.Warn().Uint64("have", a.modelRound).Uint64("want", r.ModelRound).Msg("training from a stale global model")
		}
		if err := a.learner.SetParams(a.model); err != nil {
			return fmt.Errorf("agent %s: load model of round %d: %w", a.cfg.Client, a.modelRound, err)
		}
		if gs, ok := a.learner.(GradSharer); ok && len(a.grad) > 0 {
			if err := gs.SetGrad(a.grad); err != nil {
				return fmt.Errorf("agent %s: load gradient estimator of round %d: %w", a.cfg.Client, a.modelRound, err)
			}
		}
		base = a.modelRound
	}
	// Scores of the model this round starts from: the global model's progress.
	if every := max(a.cfg.EvalEvery, 1); (r.Round-1)%uint64(every) == 0 {
		scores := a.learner.Evaluate()
		if err := a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindMetrics, a.cfg.Client), bus.KindMetrics, r.Round,
			&bus.Metrics{Round: r.Round, Scores: scores}); err != nil {
			return err
		}
	}
	began := time.Now()
	loss := a.learner.Train(a.cfg.LocalEpochs)
	if wait := a.cfg.Slowdown + a.slowWait(time.Since(began)); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	u := &bus.Update{Round: r.Round, BaseRound: base, Weight: float64(a.learner.TrainSize()), Loss: loss}
	if shares {
		if err := a.releaseModel(ctx, r.Round, u); err != nil {
			return err
		}
		if err := a.releaseGrad(ctx, r.Round, u); err != nil {
			return err
		}
		// Embeddings go out before the update, so that neighbours usually
		// hold them before the next round opens.
		if err := a.exchange(ctx, r.Round); err != nil {
			return err
		}
	}
	a.trained = r.Round
	a.rounds++
	return a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindUpdate, a.cfg.Client), bus.KindUpdate, r.Round, u)
}

// releaseModel passes the parameters through the privacy gate (clip, charge
// the ledger durably, noise) into u. A budget refusal is not an error: the
// agent keeps training and marks its updates withheld.
func (a *Agent) releaseModel(ctx context.Context, round uint64, u *bus.Update) error {
	if a.withheld {
		u.Withheld = true
		return nil
	}
	p := a.learner.Params()
	if n := l2norm(p); n > a.cfg.ModelClip && !a.clipWarned {
		a.clipWarned = true
		a.cfg.Log.Warn().Float64("norm", n).Float64("clip", a.cfg.ModelClip).Uint64("round", round).
			Msg("model clip binds: released parameters are scaled down (raise --model-clip if this hurts accuracy)")
	}
	rel, err := a.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: p, Dim: len(p),
		Sigma: a.cfg.ModelSigma, Clip: a.cfg.ModelClip})
	switch {
	case errors.Is(err, privacy.ErrBudgetExceeded):
		a.withheld, u.Withheld = true, true
		a.cfg.Log.Warn().Err(err).Uint64("round", round).Msg("privacy budget spent: model updates withheld from now on")
		return nil
	case err != nil:
		return fmt.Errorf("agent %s: release model: %w", a.cfg.Client, err)
	}
	u.Params = bus.FromReleased(rel)
	return nil
}

func l2norm(p []float32) float64 {
	var s float64
	for _, x := range p {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// privacyScores reports the ε the gate has spent, for the final metrics.
func (a *Agent) privacyScores(scores map[string]float64) {
	sp := a.gate.Spent(math.NaN())
	scores["privacy_delta"] = sp.Delta
	scores["privacy_epsilon_client"] = sp.Client
	if e, ok := sp.Channels[privacy.ChannelModel]; ok {
		scores["privacy_epsilon_model"] = e
	}
	if a.withheld {
		scores["privacy_withheld"] = 1
	}
	if a.calib != nil {
		for i, q := range a.calib.Q {
			sp := a.gate.Spent(a.calib.Rho[i])
			scores[fmt.Sprintf("privacy_rho_p%g", q)] = a.calib.Rho[i]
			scores[fmt.Sprintf("privacy_epsilon_node_p%g", q)] = sp.WorstNode
		}
	}
}

func (a *Agent) finish(ctx context.Context) (Result, error) {
	if a.algo != "local" && a.model != nil {
		if err := a.learner.SetParams(a.model); err != nil {
			return a.result(nil), fmt.Errorf("agent %s: load final model: %w", a.cfg.Client, err)
		}
	}
	a.calibrate(ctx)
	scores := a.learner.Evaluate()
	a.privacyScores(scores)
	err := errors.Join(
		a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindMetrics, a.cfg.Client), bus.KindMetrics, a.trained, &bus.Metrics{Round: a.trained, Final: true, Scores: scores}),
		a.publish(ctx, bus.Subject(a.cfg.Job, bus.KindBye, a.cfg.Client), bus.KindBye, a.trained, &bus.Bye{Reason: "done"}),
		a.tr.Flush(ctx),
	)
	a.cfg.Log.Info().Str("client", a.cfg.Client).Int("rounds", a.rounds).Interface("scores", scores).Msg("finished")
	return a.result(scores), err
}

func (a *Agent) result(final map[string]float64) Result {
	return Result{Client: a.cfg.Client, Rounds: a.rounds, Final: final, Rejects: a.val.Rejects()}
}
