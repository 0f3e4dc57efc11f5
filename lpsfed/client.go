package lpsfed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
	"graphfed/privacy"
)

// Algorithms a client can be asked to run (the aggregator's names).
const (
	AlgoFedAvg    = "fedavg"     // BPR model, sample-weighted average, nothing but the MLPs released
	AlgoLPSFedBPR = "lpsfed-bpr" // BPR model, ρ-personalized mixing: MLPs and ρ_c released
	AlgoLPSFed    = "lpsfed"     // BC model: MLPs, ρ_c and M^c released
)

// LossFor is the loss a client must train with under algo.
func LossFor(algo string) string {
	if algo == AlgoLPSFed {
		return LossBC
	}
	return LossBPR
}

// Defaults of the gated channels. The MLPs use agent's σ1 and clip; the
// scalars are clipped to their natural ranges (M^c ∈ [0, π]; ρ_c is a KL
// divergence of Φ-point distributions, rarely above a few nats).
const (
	DefaultModelSigma  = 1e-3
	DefaultModelClip   = 100
	DefaultMarginSigma = 1e-3
	DefaultMarginClip  = math.Pi
	DefaultRhoClip     = 10
)

// ClientConfig configures one LPSFed client runtime.
type ClientConfig struct {
	Job, Client string
	LocalEpochs int  // per round; default 1
	Strict      bool // send no subgraph counts with the hello
	// EvalEvery evaluates the model a round starts from and publishes the
	// scores every EvalEvery rounds; 0 evaluates only the final model.
	EvalEvery   int
	ModelSigma  float64 // noise σ on the MLPs; default DefaultModelSigma
	ModelClip   float64 // L2 clip of the MLP vector; default DefaultModelClip
	MarginSigma float64 // noise σ on M^c and ρ_c; default DefaultMarginSigma
	MarginClip  float64 // clip of M^c; default π
	RhoClip     float64 // clip of ρ_c; default DefaultRhoClip
	HelloRetry  time.Duration
	Now         func() time.Time
	Log         zerolog.Logger
}

// Result is what a client reports when the job is done.
type Result struct {
	Client  string
	Rounds  int
	Final   map[string]float64
	Rejects map[string]uint64
}

// Client runs one LPSFed client: it joins, trains its Model each round,
// releases the MLPs, ρ_c and M^c through its privacy gate, and loads the
// personalized model and margin the aggregator sends back.
type Client struct {
	cfg    ClientConfig
	tr     bus.Transport
	model  *Model
	kernel []float64 // K^c, the client's own low-pass kernel (Eq. 6/16)
	gate   *privacy.Gate
	val    *bus.Validator
	seq    uint64

	mu     sync.Mutex
	queue  []bus.Msg
	notify chan struct{}

	algo       string
	ref        []float64 // K^R
	refVersion uint64
	rhoSent    uint64 // K^R version of the last released ρ_c
	modelRound uint64
	trained    uint64
	rounds     int
	withheld   bool // model channel refused for budget
	scalarsOff bool // margin channel refused for budget
}

// NewClient builds a client over model m whose own kernel is kernel
// (K^c over Φ frequencies). Every value it publishes that derives from
// its data passes through gate.
func NewClient(cfg ClientConfig, tr bus.Transport, m *Model, kernel []float64, gate *privacy.Gate) (*Client, error) {
	if !bus.ValidID(cfg.Job) || !bus.ValidID(cfg.Client) || cfg.Client == bus.AggregatorID || cfg.Client == "all" {
		return nil, fmt.Errorf("lpsfed: client: job %q or client %q is not a valid id", cfg.Job, cfg.Client)
	}
	if gate == nil || m == nil {
		return nil, fmt.Errorf("lpsfed: client %s: no privacy gate or model", cfg.Client)
	}
	setDefault := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	setDefault(&cfg.ModelSigma, DefaultModelSigma)
	setDefault(&cfg.ModelClip, DefaultModelClip)
	setDefault(&cfg.MarginSigma, DefaultMarginSigma)
	setDefault(&cfg.MarginClip, DefaultMarginClip)
	setDefault(&cfg.RhoClip, DefaultRhoClip)
	if cfg.LocalEpochs <= 0 {
		cfg.LocalEpochs = 1
	}
	if cfg.HelloRetry == 0 {
		cfg.HelloRetry = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, tr: tr, model: m, kernel: kernel, gate: gate,
		val:    bus.NewValidator(bus.Schema{Job: cfg.Job, NumParams: m.NumShared()}),
		notify: make(chan struct{}, 1)}, nil
}

func (c *Client) enqueue(m bus.Msg) {
	c.mu.Lock()
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *Client) next(ctx context.Context) (bus.Msg, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return bus.Msg{}, ctx.Err()
		case <-c.notify:
		}
	}
}

func (c *Client) publish(ctx context.Context, subject string, kind bus.Kind, round uint64, body any) error {
	c.seq++
	data, err := bus.Seal(bus.Envelope{Job: c.cfg.Job, Kind: kind, From: c.cfg.Client, Round: round, Seq: c.seq, Time: c.cfg.Now().UnixNano()}, body)
	if err != nil {
		return err
	}
	return c.tr.Publish(ctx, subject, data)
}

// Run joins the job, trains round by round and returns when the
// aggregator says the job is done or ctx ends.
func (c *Client) Run(ctx context.Context) (Result, error) {
	j, id := c.cfg.Job, c.cfg.Client
	sub, err := c.tr.Subscribe(c.enqueue, bus.Subject(j, bus.KindRound), bus.Subject(j, bus.KindModel, "all"), bus.Subject(j, bus.KindModel, id), bus.Subject(j, bus.KindDone))
	if err != nil {
		return Result{}, fmt.Errorf("lpsfed: client %s: %w", id, err)
	}
	defer sub.Unsubscribe()
	if err := c.tr.Flush(ctx); err != nil {
		return Result{}, fmt.Errorf("lpsfed: client %s: %w", id, err)
	}
	if err := c.hello(ctx); err != nil {
		return Result{}, err
	}
	for {
		m, err := c.next(ctx)
		if err != nil {
			return c.result(nil), fmt.Errorf("lpsfed: client %s: %w", id, err)
		}
		_, body, err := c.val.Open(m.Subject, m.Data)
		if err != nil {
			c.cfg.Log.Warn().Str("subject", m.Subject).Str("reason", bus.ReasonOf(err)).Err(err).Msg("rejected message")
			continue
		}
		switch b := body.(type) {
		case *bus.Model:
			pm := *b
			if math.IsNaN(pm.Margin) || math.IsInf(pm.Margin, 0) {
				c.cfg.Log.Warn().Msg("rejected personalized model: margin not finite")
				continue
			}
			if err := c.load(&pm); err != nil {
				return c.result(nil), err
			}
		case *bus.RoundOpen:
			if err := c.train(ctx, b); err != nil {
				return c.result(nil), err
			}
		case *bus.Done:
			return c.finish(ctx)
		}
	}
}

func (c *Client) hello(ctx context.Context) error {
	j, id := c.cfg.Job, c.cfg.Client
	h := &bus.Hello{SchemaHash: c.model.SchemaHash(), NumParams: c.model.NumShared(), TrainSize: c.model.data.NumTrain()}
	if !c.cfg.Strict {
		h.Users, h.Items, h.Edges = c.model.data.Users, c.model.data.Items, c.model.data.NumTrain()
	}
	c.seq++
	data, err := bus.Seal(bus.Envelope{Job: j, Kind: bus.KindHello, From: id, Seq: c.seq, Time: c.cfg.Now().UnixNano()}, h)
	if err != nil {
		return err
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.HelloRetry)
		reply, err := c.tr.Request(rctx, bus.Subject(j, bus.KindHello, id), data)
		cancel()
		if err == nil {
			env, err := bus.Open(reply)
			if err != nil {
				return fmt.Errorf("lpsfed: client %s: hello reply: %w", id, err)
			}
			var hr bus.HelloReply
			if err := env.UnmarshalBody(&hr); err != nil {
				return fmt.Errorf("lpsfed: client %s: hello reply: %w", id, err)
			}
			if !hr.Accepted {
				return fmt.Errorf("lpsfed: client %s: join refused: %s", id, hr.Reason)
			}
			if LossFor(hr.Algo) != c.model.cfg.Loss {
				return fmt.Errorf("lpsfed: client %s: algo %s trains with loss %s, model has %s", id, hr.Algo, LossFor(hr.Algo), c.model.cfg.Loss)
			}
			c.algo = hr.Algo
			c.model.InitShared(hr.InitSeed)
			c.cfg.Log.Info().Str("client", id).Str("algo", hr.Algo).Msg("joined")
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("lpsfed: client %s: hello: %w", id, ctx.Err())
		}
	}
}

// load installs a personalized model θ^c and margin (Eq. 14).
func (c *Client) load(pm *bus.Model) error {
	if pm.Round < c.modelRound {
		return nil
	}
	if err := c.model.SetShared(pm.Params); err != nil {
		return fmt.Errorf("lpsfed: client %s: model of round %d: %w", c.cfg.Client, pm.Round, err)
	}
	if pm.HasMargin {
		c.model.SetGlobalMargin(pm.Margin)
	}
	c.modelRound = pm.Round
	return nil
}

func (c *Client) train(ctx context.Context, r *bus.RoundOpen) error {
	if r.Round <= c.trained {
		return nil
	}
	if len(r.Payload) > 0 {
		var lr bus.LPSFedRound
		if err := msgpack.Unmarshal(r.Payload, &lr); err != nil {
			c.cfg.Log.Warn().Err(err).Uint64("round", r.Round).Msg("unreadable round payload ignored")
		} else if lr.Version != c.refVersion {
			c.ref = make([]float64, len(lr.Kernel))
			for i, v := range lr.Kernel {
				c.ref[i] = float64(v)
			}
			c.refVersion = lr.Version
		}
	}
	if r.ModelRound > 0 && r.ModelRound != c.modelRound {
		c.cfg.Log.Warn().Uint64("have", c.modelRound).Uint64("want", r.ModelRound).Msg("training from a stale personalized model")
	}
	if c.cfg.EvalEvery > 0 && (r.Round-1)%uint64(c.cfg.EvalEvery) == 0 {
		if err := c.publish(ctx, bus.Subject(c.cfg.Job, bus.KindMetrics, c.cfg.Client), bus.KindMetrics, r.Round,
			&bus.Metrics{Round: r.Round, Scores: c.scores()}); err != nil {
			return err
		}
	}
	loss := c.model.Train(c.cfg.LocalEpochs)
	u := &bus.Update{Round: r.Round, BaseRound: c.modelRound, Weight: float64(c.model.data.NumTrain()), Loss: loss}
	if err := c.release(ctx, r.Round, u); err != nil {
		return err
	}
	c.trained = r.Round
	c.rounds++
	return c.publish(ctx, bus.Subject(c.cfg.Job, bus.KindUpdate, c.cfg.Client), bus.KindUpdate, r.Round, u)
}

// scores evaluates the model and names the metrics by the CLI contract.
func (c *Client) scores() map[string]float64 {
	s := c.model.Evaluate()
	return map[string]float64{
		fmt.Sprintf("recall_at_%d", s.K): s.Recall, fmt.Sprintf("ndcg_at_%d", s.K): s.NDCG,
		"eval_users": float64(s.Users), "test_users": float64(s.TestUsers),
	}
}

func (c *Client) finish(ctx context.Context) (Result, error) {
	scores := c.scores()
	sp := c.gate.Spent(math.NaN())
	scores["privacy_delta"] = sp.Delta
	scores["privacy_epsilon_client"] = sp.Client
	for ch, e := range sp.Channels {
		scores["privacy_epsilon_"+string(ch)] = e
	}
	if m, ok := c.model.MeanMargin(); ok {
		scores["mean_margin"] = m
	}
	err := errors.Join(
		c.publish(ctx, bus.Subject(c.cfg.Job, bus.KindMetrics, c.cfg.Client), bus.KindMetrics, c.trained, &bus.Metrics{Round: c.trained, Final: true, Scores: scores}),
		c.publish(ctx, bus.Subject(c.cfg.Job, bus.KindBye, c.cfg.Client), bus.KindBye, c.trained, &bus.Bye{Reason: "done"}),
		c.tr.Flush(ctx),
	)
	c.cfg.Log.Info().Str("client", c.cfg.Client).Int("rounds", c.rounds).Interface("scores", scores).Msg("finished")
	return c.result(scores), err
}

func (c *Client) result(final map[string]float64) Result {
	return Result{Client: c.cfg.Client, Rounds: c.rounds, Final: final, Rejects: c.val.Rejects()}
}
