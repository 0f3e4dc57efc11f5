package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/seeds"
)

// The contract scenarios (issue 29, items 1 and 2) run a small secure job
// twice on servers configured as `graphfed keys` configures them: once
// clean, once with an attacker holding bank-0's own key, who sends
// correctly signed messages outside the job's contract. The aggregator
// must reject every one with its reason, charge it to bank-0, and the
// final model must be bit-identical to the clean run's (seeded noise):
// the attacker's messages count for nothing, and bank-0's honest updates
// still count.

const (
	contractBanks  = 3
	contractRounds = 4
	contractVictim = 0 // the bank whose key the attacker holds
)

// contractAttack is one scenario's attack.
type contractAttack struct {
	name, doc string
	reason    string // the reject reason every attacking message must earn
	// early: the attack is a hello sent once the aggregator is ready and
	// before any honest bank starts; otherwise an update sent on every
	// round opening.
	early  bool
	weight float64
	value  float32 // every parameter of the attacking update
	// grad: the update also carries a gradient estimator (of grad in
	// every value), which the job's learners do not share.
	grad float32
}

// forgedGradUpdate is an update with a gradient estimator, as CE-FedGNN's
// carry.
type forgedGradUpdate struct {
	Round  uint64     `msgpack:"round"`
	Weight float64    `msgpack:"weight"`
	Params bus.Vector `msgpack:"params"`
	Grad   bus.Vector `msgpack:"grad"`
}

func contractScenarios() []Scenario {
	attacks := []contractAttack{
		{name: "huge-update", doc: "a bank's signed update with every parameter 1e30: rejected for its norm, counted against the bank, result unchanged",
			reason: bus.ReasonNorm, value: 1e30},
		{name: "weight-hijack", doc: "a bank's signed update claiming weight 1e15: rejected for its weight, counted against the bank, result unchanged",
			reason: bus.ReasonWeight, weight: 1e15},
		{name: "grad-hijack", doc: "a bank's signed update within the norm and weight bounds that carries a gradient estimator the job's learners do not share (every agent used to stop loading it): rejected, counted against the bank, result unchanged",
			reason: bus.ReasonGrad, weight: 1, grad: 0.01},
		{name: "schema-hijack", doc: "a bank's signed hello of schema evil/1 before any honest bank: refused and counted, never adopted, result unchanged",
			reason: bus.ReasonSchema, early: true},
	}
	var out []Scenario
	for _, a := range attacks {
		out = append(out, Scenario{Name: a.name, Doc: a.doc, Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, err := runContractJob(ctx, a.name+"-clean", o, nil)
			if err != nil {
				return fail(a.name, InvNoProgress, "clean job: %v", err), nil
			}
			attacked, err := runContractJob(ctx, a.name, o, &a)
			if err != nil {
				return fail(a.name, InvNoProgress, "attacked job: %v", err), nil
			}
			return judgeContract(a, clean, attacked), nil
		}})
	}
	return out
}

type contractRun struct {
	res  deploy.JobResult
	sent int // attacking messages sent
}

// runContractJob runs the secure job; with attack set, the attacker too.
func runContractJob(ctx context.Context, job string, o ScenarioOptions, attack *contractAttack) (contractRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	jo := deploy.JobOptions{Local: deploy.LocalOptions{Job: job, Secure: true},
		Aggregator: deploy.AggregatorOptions{Task: deploy.TaskNode, InitSeed: o.Seed, FinalWait: 200 * time.Millisecond,
			Log: o.Log, Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: contractRounds, MinClients: contractBanks,
				Quorum: contractBanks, RoundTimeout: time.Minute}}}
	nparams := 0
	for i := range contractBanks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
		if err != nil {
			return contractRun{}, err
		}
		nparams = l.NumParams()
		// The pause gives the attacker's update time to arrive within
		// each round.
		jo.Agents = append(jo.Agents, deploy.AgentOptions{ID: deploy.ClientID(i), Learner: l, LocalEpochs: 1,
			Slowdown: 30 * time.Millisecond, Privacy: logisticPrivacy(o.Seed, i), Log: o.Log})
	}
	j, err := deploy.StartJob(ctx, jo)
	if err != nil {
		return contractRun{}, err
	}
	defer j.Close()
	if attack == nil {
		res, err := j.Run(ctx)
		return contractRun{res: res}, err
	}
	at, err := newContractAttacker(j, job, nparams)
	if err != nil {
		return contractRun{}, err
	}
	defer at.close()
	if attack.early {
		return at.runEarly(ctx, j)
	}
	if err := at.onRounds(*attack); err != nil {
		return contractRun{}, err
	}
	res, err := j.Run(ctx)
	return contractRun{res: res, sent: at.count()}, err
}

// contractAttacker sends as bank-0, with bank-0's credentials and signing
// key, on a connection of its own.
type contractAttacker struct {
	nc      *nats.Conn
	signer  *bus.Signer
	job, id string
	nparams int

	mu   sync.Mutex
	seq  uint64
	sent int
	errs []error
}

func newContractAttacker(j *deploy.Job, job string, nparams int) (*contractAttacker, error) {
	id := deploy.ClientID(contractVictim)
	l := j.Local()
	signer, err := bus.CredsSigner(id, l.Creds(id))
	if err != nil {
		return nil, fmt.Errorf("attacker: %w", err)
	}
	nc, err := bus.Connect(l.URL(), bus.ConnectOptions{Name: "attacker-" + id, Creds: l.Creds(id)})
	if err != nil {
		return nil, fmt.Errorf("attacker: %w", err)
	}
	// Far above the honest agent's sequence numbers: no collision with its
	// messages' ids.
	return &contractAttacker{nc: nc, signer: signer, job: job, id: id, nparams: nparams, seq: 1 << 40}, nil
}

func (a *contractAttacker) close() { a.nc.Close() }

func (a *contractAttacker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

func (a *contractAttacker) seal(kind bus.Kind, round uint64, body any) ([]byte, error) {
	a.mu.Lock()
	a.seq++
	seq := a.seq
	a.mu.Unlock()
	return a.signer.Seal(bus.Envelope{Job: a.job, Kind: kind, From: a.id, Round: round, Seq: seq, Time: time.Now().UnixNano()}, body)
}

// onRounds sends one attacking update of every round as it opens.
func (a *contractAttacker) onRounds(at contractAttack) error {
	var once sync.Map
	_, err := a.nc.Subscribe(bus.Subject(a.job, bus.KindRound), func(msg *nats.Msg) {
		env, err := bus.Open(msg.Data)
		if err != nil {
			return
		}
		var ro bus.RoundOpen
		if env.UnmarshalBody(&ro) != nil || ro.Round == 0 {
			return
		}
		if _, dup := once.LoadOrStore(ro.Round, true); dup {
			return
		}
		p := make(bus.Vector, a.nparams)
		for i := range p {
			p[i] = at.value
		}
		var body any = &forgedUpdate{Round: ro.Round, Weight: at.weight, Params: p}
		if at.grad != 0 {
			g := make(bus.Vector, a.nparams)
			for i := range g {
				g[i] = at.grad
			}
			body = &forgedGradUpdate{Round: ro.Round, Weight: at.weight, Params: p, Grad: g}
		}
		data, err := a.seal(bus.KindUpdate, ro.Round, body)
		if err == nil {
			err = a.nc.Publish(bus.Subject(a.job, bus.KindUpdate, a.id), data)
		}
		a.mu.Lock()
		if err != nil {
			a.errs = append(a.errs, err)
		} else {
			a.sent++
		}
		a.mu.Unlock()
	})
	if err != nil {
		return fmt.Errorf("attacker: %w", err)
	}
	return a.nc.Flush()
}

// runEarly starts the aggregator alone, sends the hijacking hello until
// the aggregator has answered one, then starts the honest banks.
func (a *contractAttacker) runEarly(ctx context.Context, j *deploy.Job) (contractRun, error) {
	actx, stop := context.WithCancel(ctx)
	defer stop()
	var run contractRun
	var aggErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		run.res.Aggregator, aggErr = j.Aggregator().Run(ctx)
	}()
	subject := bus.Subject(a.job, bus.KindHello, a.id)
	for answered := false; !answered; {
		data, err := a.seal(bus.KindHello, 0, &bus.Hello{SchemaHash: "evil", NumParams: 1, TrainSize: 10})
		if err != nil {
			return run, fmt.Errorf("attacker: %w", err)
		}
		// Until the aggregator subscribes nobody answers: ask again.
		reply, err := a.nc.RequestWithContext(withTimeout(actx, 500*time.Millisecond), subject, data)
		switch {
		case err == nil:
			run.sent++
			env, oerr := bus.Open(reply.Data)
			var hr bus.HelloReply
			if oerr != nil || env.UnmarshalBody(&hr) != nil {
				return run, fmt.Errorf("attacker: undecodable hello reply")
			}
			if hr.Accepted {
				return run, fmt.Errorf("attacker: the aggregator accepted schema evil/1")
			}
			answered = true
		case ctx.Err() != nil:
			return run, ctx.Err()
		}
	}
	agents := j.Agents()
	run.res.Agents = make([]agent.Result, len(agents))
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, ag := range agents {
		wg.Go(func() { run.res.Agents[i], errs[i] = ag.Run(actx) })
	}
	<-done
	if aggErr != nil {
		stop()
	}
	wg.Wait()
	return run, errors.Join(append(errs, aggErr)...)
}

// withTimeout is ctx bounded by d; its cancel runs when ctx ends.
func withTimeout(ctx context.Context, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	context.AfterFunc(c, cancel)
	return c
}

// judgeContract compares the attacked run with the clean one.
func judgeContract(at contractAttack, clean, att contractRun) Outcome {
	name, victim := at.name, deploy.ClientID(contractVictim)
	if len(clean.res.Aggregator.Rejects) > 0 {
		return fail(name, InvNotRejected, "the clean run rejected %v", clean.res.Aggregator.Rejects)
	}
	charged := att.res.Aggregator.RejectsBy[victim][at.reason]
	if att.sent == 0 || charged == 0 || charged > uint64(att.sent) {
		return fail(name, InvNotRejected, "%d attacking messages sent, %d %s rejects charged to %s (all: %v, by sender: %v)",
			att.sent, charged, at.reason, victim, att.res.Aggregator.Rejects, att.res.Aggregator.RejectsBy)
	}
	if got := att.res.Aggregator.Rejects[at.reason]; got != charged {
		return fail(name, InvNotRejected, "%d %s rejects counted, %d charged to %s", got, at.reason, charged, victim)
	}
	for _, r := range [][]aggregator.RoundClosed{clean.res.Aggregator.Closes, att.res.Aggregator.Closes} {
		if len(r) != contractRounds {
			return fail(name, InvNoProgress, "%d of %d rounds closed", len(r), contractRounds)
		}
	}
	for _, rc := range att.res.Aggregator.Closes {
		if len(rc.In) != contractBanks || len(rc.Stale) > 0 {
			return fail(name, InvResultChanged, "round %d counted %v (stale %v), want the %d banks", rc.Round, rc.In, rc.Stale, contractBanks)
		}
	}
	if len(att.res.Agents) != contractBanks || slices.ContainsFunc(att.res.Agents, func(r agent.Result) bool { return r.Rounds == 0 }) {
		return fail(name, InvNoProgress, "the honest banks did not all train: %d results", len(att.res.Agents))
	}
	a, b := clean.res.Aggregator.Model, att.res.Aggregator.Model
	same := len(a) == len(b) && len(a) > 0
	for i := 0; same && i < len(a); i++ {
		same = math.Float32bits(a[i]) == math.Float32bits(b[i])
	}
	if !same {
		return fail(name, InvResultChanged, "final model %v under attack, %v without", b, a)
	}
	return Outcome{Name: name, Metrics: map[string]float64{"attacks_sent": float64(att.sent), "rejected_" + at.reason: float64(charged)}}
}
