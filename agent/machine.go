package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"graphfed/bus"
	"graphfed/privacy"
)

// MachineConfig configures a Machine.
type MachineConfig struct {
	Job, Client string
	LocalEpochs int           // per round; default 1
	HelloRetry  time.Duration // between unanswered hellos; default 1s
	ModelSigma  float64       // σ1 on released parameters; default DefaultModelSigma
	ModelClip   float64       // L2 clip of released parameters; default DefaultModelClip
	// Privacy configures the gate; its Job and Client are set from the
	// fields above. Ledger is the durable ledger the gate charges: it must
	// outlive crashes, since a restart replays it to recover the budget.
	Privacy privacy.Config
	Ledger  privacy.Ledger
}

// Machine is an agent's protocol logic as a deterministic state machine, in
// the style of the aggregator's Machine: Step takes an event and returns the
// actions to carry out, without reading a clock, a socket or a random
// source of its own. It exists so that the seeded simulator can run agents
// next to aggregator.Machine, crash them and restart them; Agent is the
// NATS-facing loop.
//
// It releases model parameters only (FedAvg and Local); CE-FedGNN's
// gradient and embedding channels are Agent's. Every release goes through a
// real privacy.Gate, whose ledger append is the machine's only I/O. It is
// not safe for concurrent use.
type Machine struct {
	cfg     MachineConfig
	learner Learner
	gate    *privacy.Gate // nil while down
	now     time.Time

	up       bool
	done     bool // job finished or join refused: nothing more to do
	joined   bool
	helloDue time.Time // when an unanswered hello is retried

	algo       string
	openRound  uint64 // highest round seen open
	trained    uint64 // last round trained (recovered from the ledger on restart)
	model      []float32
	modelRound uint64
	withheld   bool // the gate refused the model channel for budget
}

// NewMachine returns a machine that is down; Step(Start{...}) boots it.
func NewMachine(cfg MachineConfig, l Learner) (*Machine, error) {
	if !bus.ValidID(cfg.Job) || !bus.ValidID(cfg.Client) || cfg.Client == bus.AggregatorID || cfg.Client == "all" {
		return nil, fmt.Errorf("agent: new machine: job %q or client %q is not a valid id", cfg.Job, cfg.Client)
	}
	if l == nil || cfg.Ledger == nil {
		return nil, fmt.Errorf("agent %s: new machine: a learner and a ledger are required", cfg.Client)
	}
	if cfg.LocalEpochs <= 0 {
		cfg.LocalEpochs = 1
	}
	if cfg.HelloRetry <= 0 {
		cfg.HelloRetry = time.Second
	}
	if cfg.ModelSigma == 0 {
		cfg.ModelSigma = DefaultModelSigma
	}
	if cfg.ModelClip == 0 {
		cfg.ModelClip = DefaultModelClip
	}
	cfg.Privacy.Job, cfg.Privacy.Client = cfg.Job, cfg.Client
	return &Machine{cfg: cfg, learner: l}, nil
}

// Up reports whether the agent is running (booted and not crashed).
func (m *Machine) Up() bool { return m.up }

// Trained is the last round the agent trained for.
func (m *Machine) Trained() uint64 { return m.trained }

// Withheld reports whether the privacy budget stopped parameter releases.
func (m *Machine) Withheld() bool { return m.withheld }

// NextWake is when the machine wants a MachineTick (an unanswered hello
// is due for a retry); zero when it waits for nothing.
func (m *Machine) NextWake() time.Time {
	if !m.up || m.joined || m.done {
		return time.Time{}
	}
	return m.helloDue
}

// Step applies one event. An error means the agent cannot go on (its
// ledger failed, its learner refused a model); the adapter treats it as a
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
		return nil, nil // a down agent hears nothing
	}
	switch e := ev.(type) {
	case JoinReply:
		m.now = e.Now
		return m.joinReply(ctx, e)
	case RoundOpened:
		m.now = e.Now
		m.openRound = max(m.openRound, e.Round)
		return m.maybeTrain(ctx)
	case ModelIn:
		m.now = e.Now
		if len(e.Params) > 0 && (m.model == nil || e.Round >= m.modelRound) {
			m.model, m.modelRound = slices.Clone(e.Params), e.Round
		}
	case MachineTick:
		m.now = e.Now
	case JobDone:
		m.now = e.Now
		m.done = true
		return nil, nil
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
	pc := m.cfg.Privacy
	if pc.Seed != nil {
		// A distinct stream per incarnation: a restarted agent must not add
		// the very noise it added before its crash to new values.
		seed := *pc.Seed + s.Incarnation*0x9e3779b97f4a7c15
		pc.Seed = &seed
	}
	gate, err := privacy.NewGate(ctx, pc, m.cfg.Ledger, func() time.Time { return m.now })
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", m.cfg.Client, op, err)
	}
	entries, err := m.cfg.Ledger.Entries(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s: %w", m.cfg.Client, op, err)
	}
	// The ledger is the agent's durable log: a round with a model release
	// was trained (and its update possibly sent) in an earlier life, and
	// training it again would charge the budget twice for one update.
	for _, e := range entries {
		if e.Job == m.cfg.Job && e.Client == m.cfg.Client && e.Channel == privacy.ChannelModel {
			m.trained = max(m.trained, e.Round)
		}
	}
	m.gate, m.up = gate, true
	return m.hello(), nil
}

func (m *Machine) crash() {
	*m = Machine{cfg: m.cfg, learner: m.learner, now: m.now}
}

func (m *Machine) hello() []MachineAction {
	m.helloDue = m.now.Add(m.cfg.HelloRetry)
	return []MachineAction{SendHello{Hello: bus.Hello{SchemaHash: m.learner.SchemaHash(),
		NumParams: m.learner.NumParams(), TrainSize: m.learner.TrainSize()}}}
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
		return nil, nil
	}
	m.joined, m.algo = true, r.Algo
	m.learner.Init(r.InitSeed)
	m.openRound = max(m.openRound, r.Round)
	return m.maybeTrain(ctx)
}

func (m *Machine) maybeTrain(ctx context.Context) ([]MachineAction, error) {
	if !m.joined || m.openRound <= m.trained {
		return nil, nil
	}
	return m.train(ctx, m.openRound)
}

func (m *Machine) train(ctx context.Context, round uint64) ([]MachineAction, error) {
	shares := m.algo != "local"
	base := uint64(0)
	if shares && m.modelRound > 0 && m.model != nil {
		if err := m.learner.SetParams(m.model); err != nil {
			return nil, fmt.Errorf("agent %s: load model of round %d: %w", m.cfg.Client, m.modelRound, err)
		}
		base = m.modelRound
	}
	loss := m.learner.Train(m.cfg.LocalEpochs)
	m.trained = round
	up := PublishUpdate{Update: bus.Update{Round: round, BaseRound: base, Weight: float64(m.learner.TrainSize()), Loss: loss}}
	if !shares {
		return []MachineAction{up}, nil
	}
	var out []MachineAction
	if !m.withheld {
		p := m.learner.Params()
		rel, err := m.gate.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: round, Flat: p, Dim: len(p),
			Sigma: m.cfg.ModelSigma, Clip: m.cfg.ModelClip})
		switch {
		case errors.Is(err, privacy.ErrBudgetExceeded):
			m.withheld = true
			out = append(out, BudgetSpent{Round: round, Err: err})
		case err != nil:
			return nil, fmt.Errorf("agent %s: release model of round %d: %w", m.cfg.Client, round, err)
		default:
			up.Update.Params = bus.FromReleased(rel)
			up.Releases = []privacy.Entry{rel.Entry()}
		}
	}
	up.Update.Withheld = m.withheld
	return append(out, up), nil
}
