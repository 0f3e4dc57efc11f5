package agent

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
	"graphfed/learner"
	"graphfed/privacy"
)

// MachineConfig configures a Machine.
type MachineConfig struct {
	Job, Client string
	// Algo is the algorithm the agent's learner was built for: a job that
	// announces another one is refused, since a learner built for
	// cefedgnn would exchange embeddings in a fedavg job. Empty accepts
	// whatever the aggregator runs.
	Algo        string
	LocalEpochs int // per round; default 1
	// EvalEvery scores the model a round starts from every this many rounds
	// (round 1, 1+EvalEvery, ...); 0 means 1, negative never. The final
	// scores are always computed.
	EvalEvery  int
	HelloRetry time.Duration // between unanswered hellos; default 1s
	// ModelSigma and ModelClip are the noise σ1 and L2 clip of released
	// parameters; GradSigma is σ2 on the gradient estimator (clipped like
	// the model); EmbSigma σ0 on normalized boundary embeddings (negative:
	// no exchange, the "w/o exchange" ablation); MarginSigma σ on released
	// scalars. Zero picks the defaults.
	ModelSigma, ModelClip float64
	GradSigma, EmbSigma   float64
	MarginSigma           float64
	// DescriptorSigma is σ on the rows of a DescriptorReleaser's
	// descriptors (unit directions, clipped to norm 1); zero picks
	// DefaultDescriptorSigma.
	DescriptorSigma float64
	// Gate, when set, is the gate every release goes through (a driver
	// that reads its spending too); it must have been built over the
	// agent's durable ledger. Otherwise every Start builds one from
	// Privacy (its Job and Client are set from the fields above) over
	// Ledger, which must outlive crashes: a restart replays it to recover
	// the budget and the rounds already released.
	Gate    *privacy.Gate
	Privacy privacy.Config
	Ledger  privacy.Ledger
	// SecAgg is the agent's part in secure aggregation (machine_secure.go),
	// used in the rounds whose opening announces one.
	SecAgg SecAggConfig
}

// Machine is an agent's protocol logic as a deterministic state machine,
// in the style of etcd raft's RawNode: Step takes an event and returns the
// actions to carry out, without reading a clock, a socket or a random
// source of its own. Every channel lives here: model parameters, the
// gradient estimator, boundary embeddings with their calibration, and
// LPSFed's scalars and personalized margin. Training happens inside Step
// (the learner is deterministic given its seed), and every release goes
// through the privacy gate, whose ledger append is the machine's only
// I/O. Agent drives it over NATS; the seeded simulator drives it next to
// aggregator.Machine, crashes and restarts it.
//
// It is not safe for concurrent use.
type Machine struct {
	cfg     MachineConfig
	learner learner.Learner
	gate    *privacy.Gate // nil while down
	now     time.Time

	up        bool
	done      bool // job finished or join refused: nothing more to do
	joined    bool
	helloDue  time.Time // when an unanswered hello is retried
	helloTry  int       // hellos sent unanswered in this life
	helloWait time.Duration

	algo string
	// released is the last round released per channel, recovered from the
	// ledger on Start: a round with a model release was trained (and its
	// update possibly sent) in an earlier life, and is never trained again.
	released map[privacy.Channel]uint64
	trained  uint64 // last round trained (or released in an earlier life)
	rounds   int    // rounds trained in this life

	model      []float32 // latest global or personalized model
	grad       []float32
	margin     float64
	hasMargin  bool
	modelRound uint64
	loaded     uint64 // round of the model last loaded into the learner (0: none)

	withheld   map[privacy.Channel]bool // refused for budget
	clipWarned bool
	exch       exchangeState

	// badModels counts the received models refused for their values
	// (model_check.go); badNoted is the last round one was logged for.
	badModels  uint64
	badReasons []string // their bus reject reasons, until TakeBadReasons
	badNoted   uint64

	sa secureState
}

// NewMachine returns a machine that is down; Step(Start{...}) boots it.
func NewMachine(cfg MachineConfig, l learner.Learner) (*Machine, error) {
	if !bus.ValidID(cfg.Job) || !bus.ValidID(cfg.Client) || cfg.Client == bus.AggregatorID || cfg.Client == "all" {
		return nil, fmt.Errorf("agent: new machine: job %q or client %q is not a valid id", cfg.Job, cfg.Client)
	}
	if l == nil || (cfg.Ledger == nil && cfg.Gate == nil) {
		return nil, fmt.Errorf("agent %s: new machine: a learner and a ledger or gate are required", cfg.Client)
	}
	if cfg.LocalEpochs <= 0 {
		cfg.LocalEpochs = 1
	}
	if cfg.EvalEvery == 0 {
		cfg.EvalEvery = 1
	}
	if cfg.HelloRetry <= 0 {
		cfg.HelloRetry = time.Second
	}
	for _, d := range []struct {
		v   *float64
		def float64
	}{{&cfg.ModelSigma, DefaultModelSigma}, {&cfg.ModelClip, DefaultModelClip}, {&cfg.GradSigma, DefaultGradSigma},
		{&cfg.EmbSigma, DefaultEmbSigma}, {&cfg.MarginSigma, DefaultMarginSigma}, {&cfg.DescriptorSigma, DefaultDescriptorSigma}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	cfg.Privacy.Job, cfg.Privacy.Client = cfg.Job, cfg.Client
	return &Machine{cfg: cfg, learner: l}, nil
}

// Up reports whether the agent is running (booted and not crashed).
func (m *Machine) Up() bool { return m.up }

// Trained is the last round the agent trained for (or released in an
// earlier life).
func (m *Machine) Trained() uint64 { return m.trained }

// Rounds is the number of rounds trained since the last Start.
func (m *Machine) Rounds() int { return m.rounds }

// Withheld reports whether the privacy budget stopped parameter releases.
func (m *Machine) Withheld() bool { return m.withheld[privacy.ChannelModel] }

// Trains reports whether e would make the machine train (a driver that
// simulates slow hardware waits before the training, not between a
// release and its publication).
func (m *Machine) Trains(e RoundOpened) bool {
	return m.up && !m.done && m.joined && e.Round > m.trained && !e.Superseded
}

// Gate is the privacy gate of the current life (nil while down).
func (m *Machine) Gate() *privacy.Gate { return m.gate }

// HelloWait is how long the hello just sent waits for its reply before
// the next one (helloBackoff).
func (m *Machine) HelloWait() time.Duration { return m.helloWait }

// NextWake is when the machine wants a MachineTick (an unanswered hello
// is due for a retry); zero when it waits for nothing.
func (m *Machine) NextWake() time.Time {
	if !m.up || m.done {
		return time.Time{}
	}
	if m.joined {
		return m.secureWake()
	}
	return m.helloDue
}

// Step applies one event. An error means the agent cannot go on (its
// ledger failed, its learner refused a model); the driver treats it as a
// crash.
func (m *Machine) Step(ctx context.Context, ev MachineEvent) ([]MachineAction, error) {
	if s, ok := ev.(Start); ok {
		return m.start(ctx, s)
	}
	if _, ok := ev.(Crash); ok {
		m.crash()
		return nil, nil
	}
	if !m.up || m.done {
		return nil, nil // a down or finished agent hears nothing
	}
	switch e := ev.(type) {
	case JoinReply:
		m.now = e.Now
		return m.joinReply(ctx, e)
	case RoundOpened:
		m.now = e.Now
		if m.joined {
			m.gate.SetAnchor(e.Anchor)
		}
		return m.roundOpened(ctx, e)
	case ModelIn:
		m.now = e.Now
		return m.modelIn(e), nil
	case EmbeddingsIn:
		m.now = e.Now
		return m.receive(e), nil
	case SecAggIn:
		m.now = e.Now
		return m.secureIn(ctx, e), nil
	case MachineTick:
		m.now = e.Now
		if m.joined {
			return m.maybeMask(ctx, e.Now, nil), nil
		}
	case JobDone:
		m.now = e.Now
		m.gate.SetAnchor(e.Anchor)
		if !m.joined && m.trained == 0 {
			// A job that ended before this agent ever joined (in this life
			// or, by its ledger, an earlier one) has nothing to score;
			// final metrics and a bye from a client the aggregator never
			// admitted would only be refused as an unknown sender.
			m.done = true
			return []MachineAction{Refused{Reason: "the job finished before this agent joined"}}, nil
		}
		return m.finish(ctx)
	default:
		return nil, fmt.Errorf("agent %s: step: unknown event %T", m.cfg.Client, ev)
	}
	return m.maybeHello(), nil
}

func (m *Machine) start(ctx context.Context, s Start) ([]MachineAction, error) {
	const op = "start"
	if m.up {
		return nil, fmt.Errorf("agent %s: %s: already up", m.cfg.Client, op)
	}
	m.crash() // a boot starts from nothing but the ledger
	m.now = s.Now
	gate := m.cfg.Gate
	if gate == nil {
		var err error
		if gate, err = privacy.NewGate(ctx, m.cfg.Privacy, m.cfg.Ledger, func() time.Time { return m.now }); err != nil {
			return nil, fmt.Errorf("agent %s: %s: %w", m.cfg.Client, op, err)
		}
	}
	// One read for the gate and the machine: an append of the previous
	// life stored after the gate was built is then in both, or in neither
	// (and the gate settles it when it refuses the next append).
	entries, err := gate.Sync(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", m.cfg.Client, op, err)
	}
	// The ledger is the agent's durable log: a round with a model release
	// was trained (and its update possibly sent) in an earlier life, and
	// training it again would charge the budget twice for one update.
	// Any release counts, not only the model's: a round whose parameters
	// were withheld (budget spent) may still have released its boundary
	// embeddings, and retraining it would release them twice.
	for _, e := range entries {
		m.released[e.Channel] = max(m.released[e.Channel], e.Round)
		m.trained = max(m.trained, e.Round)
	}
	if _, ok := m.released[privacy.ChannelDescriptor]; ok {
		// Released in an earlier life (and sent, or lost with that life's
		// update): never again.
		if dr, ok := m.learner.(learner.DescriptorReleaser); ok {
			dr.DescriptorsReleased()
		}
	}
	m.gate, m.up = gate, true
	return m.hello(), nil
}

func (m *Machine) crash() {
	*m = Machine{cfg: m.cfg, learner: m.learner, now: m.now,
		released: map[privacy.Channel]uint64{}, withheld: map[privacy.Channel]bool{}}
}

func (m *Machine) hello() []MachineAction {
	m.helloWait = helloBackoff(m.cfg.HelloRetry, m.cfg.Client, m.helloTry)
	m.helloTry++
	m.helloDue = m.now.Add(m.helloWait)
	h := bus.Hello{SchemaHash: m.learner.SchemaHash(), NumParams: m.learner.NumParams(), TrainSize: m.learner.TrainSize()}
	if hc, ok := m.learner.(learner.HelloCounter); ok {
		h.Users, h.Items, h.Edges = hc.HelloCounts()
	}
	return []MachineAction{SendHello{Hello: h}}
}

// maybeHello retries an unanswered hello once it is due.
func (m *Machine) maybeHello() []MachineAction {
	if m.joined || m.now.Before(m.helloDue) {
		return nil
	}
	return m.hello()
}

func (m *Machine) joinReply(ctx context.Context, r JoinReply) ([]MachineAction, error) {
	if m.joined {
		return nil, nil // a duplicated reply
	}
	if !r.Accepted {
		// The aggregator refuses only for good (job over, other model
		// schema): retrying would not help.
		m.done = true
		return []MachineAction{Refused{Reason: r.Reason}}, nil
	}
	if m.cfg.Algo != "" && r.Algo != m.cfg.Algo {
		m.done = true
		return []MachineAction{Refused{Reason: fmt.Sprintf("the job runs %s, this agent was built for %s", r.Algo, m.cfg.Algo)}}, nil
	}
	if ar, ok := m.learner.(learner.AlgoReceiver); ok {
		if err := ar.SetAlgo(r.Algo); err != nil {
			return nil, fmt.Errorf("agent %s: join: %w", m.cfg.Client, err)
		}
	}
	m.joined, m.algo = true, r.Algo
	m.gate.SetAnchor(r.Anchor)
	m.learner.Init(r.InitSeed)
	if r.Reannounced || r.Round <= m.trained {
		return nil, nil
	}
	return m.train(ctx, r.Round, 0)
}

func (m *Machine) roundOpened(ctx context.Context, e RoundOpened) ([]MachineAction, error) {
	var out []MachineAction
	if len(e.Payload) > 0 {
		if pr, ok := m.learner.(learner.RoundPayloadReceiver); ok {
			var lr bus.LPSFedRound
			if err := msgpack.Unmarshal(e.Payload, &lr); err != nil {
				out = append(out, Note{Warn: true, Round: e.Round, Msg: "unreadable round payload ignored", Err: err})
			} else {
				k := make([]float64, len(lr.Kernel))
				for i, v := range lr.Kernel {
					k[i] = float64(v)
				}
				pr.SetReference(lr.Version, k)
			}
		}
	}
	m.noteAnnounce(e.Round, e.SecAgg)
	if e.SecureJob {
		m.sa.secureJob = true
	}
	if acts, sat := m.catchUp(e.Round, e.SecAgg, out); sat {
		return acts, nil
	}
	switch {
	case !m.joined || e.Round < m.trained:
		return out, nil
	case e.Round == m.trained:
		// Trained already (a repeated opening): an input still held, as
		// after a secure round that closed without it, goes into this
		// round's sum.
		return m.joinSecure(e.Round, out), nil
	case e.Superseded:
		return append(out, Note{Round: e.Round, Msg: "skipping superseded round"}), nil
	}
	acts, err := m.train(ctx, e.Round, e.ModelRound)
	if err != nil {
		return nil, err
	}
	return m.joinSecure(e.Round, append(out, acts...)), nil
}

func (m *Machine) modelIn(e ModelIn) []MachineAction {
	if e.HasMargin && (math.IsNaN(e.Margin) || math.IsInf(e.Margin, 0)) {
		return []MachineAction{Note{Warn: true, Round: e.Round, Msg: "rejected model: margin not finite"}}
	}
	if len(e.Params) == 0 || (m.model != nil && e.Round < m.modelRound) {
		return nil
	}
	if e.Mix {
		e.Params = m.mixOwn(e.Round, e.Params, e.RhoBar)
	}
	if reason, why := m.checkModel(e); reason != "" {
		return m.badModel(e.Round, reason, why)
	}
	m.model, m.grad, m.modelRound = slices.Clone(e.Params), slices.Clone(e.Grad), e.Round
	m.margin, m.hasMargin = e.Margin, e.HasMargin
	return nil
}

// shares reports whether the algorithm shares parameters ("local" trains
// alone).
func (m *Machine) shares() bool { return m.algo != "local" }

// load installs the latest model received before every round: what a
// round trains is then a function of the model it starts from, whatever
// the learner did before (a crash, a round whose update was lost), which is
// what makes a faulty run end where a clean one does.
func (m *Machine) load() error {
	if !m.shares() || m.model == nil {
		return nil
	}
	if err := m.learner.SetParams(m.model); err != nil {
		return fmt.Errorf("agent %s: load model of round %d: %w", m.cfg.Client, m.modelRound, err)
	}
	if gs, ok := m.learner.(learner.GradSharer); ok && len(m.grad) > 0 {
		if err := gs.SetGrad(m.grad); err != nil {
			return fmt.Errorf("agent %s: load gradient estimator of round %d: %w", m.cfg.Client, m.modelRound, err)
		}
	}
	if mr, ok := m.learner.(learner.MarginReceiver); ok && m.hasMargin {
		mr.SetMargin(m.margin)
	}
	m.loaded = m.modelRound
	return nil
}

// finish loads the final model and scores it, with the privacy spent.
func (m *Machine) finish(ctx context.Context) ([]MachineAction, error) {
	m.done = true
	if err := m.load(); err != nil {
		return nil, err
	}
	out := m.calibrate(ctx, m.trained, privacy.CalibrateOptions{MaxExact: heldCalibrationExact, Samples: heldCalibrationSamples})
	var scores map[string]float64
	if fe, ok := m.learner.(learner.FinalEvaluator); ok {
		scores = fe.EvaluateFinal()
	} else {
		scores = m.learner.Evaluate()
	}
	m.privacyScores(scores)
	if m.sa.refusals > 0 {
		scores["secagg_refused"] = float64(m.sa.refusals)
	}
	return append(out, Finished{Round: m.trained, Scores: scores, Head: m.gate.Head()}), nil
}

// privacyScores reports the ε the gate has spent, for the final metrics.
func (m *Machine) privacyScores(scores map[string]float64) {
	sp := m.gate.Spent(math.NaN())
	scores["privacy_delta"] = sp.Delta
	scores["privacy_epsilon_client"] = sp.Client
	for ch, e := range sp.Channels {
		scores["privacy_epsilon_"+string(ch)] = e
	}
	if m.withheld[privacy.ChannelModel] {
		scores["privacy_withheld"] = 1
	}
	if c := m.exch.calib; c != nil {
		for i, q := range c.Q {
			sp := m.gate.Spent(c.Rho[i])
			scores[fmt.Sprintf("privacy_rho_p%g", q)] = c.Rho[i]
			scores[fmt.Sprintf("privacy_epsilon_node_p%g", q)] = sp.WorstNode
		}
	}
}
