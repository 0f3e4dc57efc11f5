package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/secagg"
	"graphfed/seeds"
)

// The secure-aggregation scenarios (issue 31) run a small FedAvg job of
// logistic banks on an embedded server configured as `graphfed keys`
// configures it (per-party accounts and permissions, secure
// aggregation's exports), and strike the protocol at its steps. The
// aggregator is deploy's; each bank is built here from deploy's parts
// (signing, connection, ledger, gate) around the agent package, because
// a fault must sit between the agent and its connection
// (deploy.AgentOptions.Transport is a concrete connection, which cannot
// drop, hold or cut one publication).

const (
	secBanks   = 5
	secTimeout = time.Minute
)

// saSamples are each logistic bank's examples.
const saSamples = 64

// publishHook decides what happens to one publication of a bank: call
// publish to send it (now, later or never).
type publishHook func(ctx context.Context, subject string, data []byte, publish func() error) error

// faultTransport is a bank's connection with a hook on what it publishes
// and a look at what it receives.
type faultTransport struct {
	bus.Transport
	mu        sync.Mutex
	onPublish publishHook
	onReceive func(bus.Msg)
}

func (t *faultTransport) hooks() (publishHook, func(bus.Msg)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.onPublish, t.onReceive
}

func (t *faultTransport) Publish(ctx context.Context, subject string, data []byte) error {
	hook, _ := t.hooks()
	if hook == nil {
		return t.Transport.Publish(ctx, subject, data)
	}
	return hook(ctx, subject, data, func() error { return t.Transport.Publish(ctx, subject, data) })
}

func (t *faultTransport) Subscribe(h bus.Handler, subjects ...string) (bus.Subscription, error) {
	return t.Transport.Subscribe(func(m bus.Msg) {
		if _, see := t.hooks(); see != nil {
			see(m)
		}
		h(m)
	}, subjects...)
}

// saBank is one bank of a secure job: its connection, agent, learner and
// gate, and how its run ended.
type saBank struct {
	id      string
	tr      *bus.NATSTransport
	fault   *faultTransport
	learner *recordingLearner
	agent   *deploy.Agent
	weight  float64

	cancel context.CancelFunc
	done   chan struct{}
	res    agent.Result
	err    error
	killed bool
}

// kill ends the bank at once: its connection closes without a bye (a
// crashed machine), then its run is cancelled.
func (b *saBank) kill() {
	b.killed = true
	_ = b.tr.Flush(context.Background())
	_ = b.tr.Close()
	b.cancel()
}

// recordingLearner remembers the parameters each local training left: the
// released update, up to the gate's noise, which the scenarios make
// negligible where they compare sums.
type recordingLearner struct {
	*agent.LogisticLearner
	mu      sync.Mutex
	trained [][]float32 // by training, from the first
	started [][]float32 // the parameters each training started from
}

func (l *recordingLearner) Train(epochs int) float64 {
	start := slices.Clone(l.Params())
	loss := l.LogisticLearner.Train(epochs)
	l.mu.Lock()
	l.started = append(l.started, start)
	l.trained = append(l.trained, slices.Clone(l.Params()))
	l.mu.Unlock()
	return loss
}

func (l *recordingLearner) history() (started, trained [][]float32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.started), slices.Clone(l.trained)
}

// saJobOptions shape a secure job.
type saJobOptions struct {
	job       string
	rounds    int
	round     aggregator.Config // Algo, Rounds, MinClients filled in
	slowdown  time.Duration
	sigma     float64 // the gates' σ1; 0: logisticPrivacy's
	inputWait time.Duration
}

// saJob is a secure job built and not yet run.
type saJob struct {
	local *deploy.Local
	agg   *deploy.Aggregator
	banks []*saBank

	mu     sync.Mutex
	closes []aggregator.RoundClosed
	closed chan aggregator.RoundClosed
}

// startSecAggJob starts the secure environment, the aggregator and the
// banks (not running).
func startSecAggJob(ctx context.Context, o ScenarioOptions, jo saJobOptions) (_ *saJob, err error) {
	ids := make([]string, secBanks)
	for i := range ids {
		ids[i] = deploy.ClientID(i)
	}
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: jo.job, Banks: ids, Secure: true, SecAgg: true})
	if err != nil {
		return nil, err
	}
	j := &saJob{local: local, closed: make(chan aggregator.RoundClosed, 64)}
	defer func() {
		if err != nil {
			j.close()
		}
	}()
	rc := jo.round
	rc.Algo, rc.Rounds, rc.MinClients = aggregator.AlgoFedAvg, jo.rounds, secBanks
	if rc.RoundTimeout == 0 {
		rc.RoundTimeout = 20 * time.Second
	}
	rc.SecAgg.On = true
	if rc.SecAgg.InputWait == 0 {
		rc.SecAgg.InputWait = max(jo.inputWait, time.Second)
	}
	if rc.SecAgg.RevealWait == 0 {
		rc.SecAgg.RevealWait = 2 * time.Second
	}
	if j.agg, err = deploy.NewAggregator(ctx, local.AggregatorOptions(deploy.AggregatorOptions{Job: jo.job, Task: deploy.TaskNode,
		InitSeed: o.Seed, FinalWait: 300 * time.Millisecond, Log: o.Log, Round: rc, OnRound: j.onRound})); err != nil {
		return nil, err
	}
	var contract aggregator.Contract
	for i, id := range ids {
		p := logisticPrivacy(o.Seed, i)
		if jo.sigma > 0 {
			p.ModelSigma = jo.sigma
		}
		b, err := newSecAggBank(ctx, local, jo.job, id, i, o, p, jo.slowdown)
		if err != nil {
			return nil, err
		}
		j.banks = append(j.banks, b)
		contract = aggregator.Contract{SchemaHash: b.learner.SchemaHash(), NumParams: b.learner.NumParams(),
			Clip: p.ModelClip, Sigma: max(contract.Sigma, p.ModelSigma), GradSigma: p.GradSigma, Grad: aggregator.GradNone}
	}
	if err := j.agg.Server().FixContract(contract); err != nil {
		return nil, err
	}
	return j, nil
}

// newSecAggBank builds bank id with deploy.NewAgent, its connection
// behind a faultTransport.
func newSecAggBank(ctx context.Context, l *deploy.Local, job, id string, i int, o ScenarioOptions, p deploy.PrivacyOptions, slowdown time.Duration) (*saBank, error) {
	ll, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: saSamples, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
	if err != nil {
		return nil, err
	}
	b := &saBank{id: id, learner: &recordingLearner{LogisticLearner: ll}, done: make(chan struct{}), weight: float64(ll.TrainSize())}
	b.agent, err = deploy.NewAgent(ctx, l.AgentOptions(deploy.AgentOptions{Job: job, ID: id, Task: deploy.TaskNode,
		Algo: aggregator.AlgoFedAvg, Learner: b.learner, Privacy: p, SecAgg: true, LocalEpochs: 1, Slowdown: slowdown, Log: o.Log,
		WrapTransport: func(t bus.Transport) bus.Transport {
			b.fault = &faultTransport{Transport: t}
			return b.fault
		}}))
	if err != nil {
		return nil, err
	}
	b.tr = b.agent.Transport()
	return b, nil
}

func (j *saJob) onRound(rc aggregator.RoundClosed) {
	j.mu.Lock()
	j.closes = append(j.closes, rc)
	j.mu.Unlock()
	select {
	case j.closed <- rc:
	default:
	}
}

// run runs every bank and the aggregator until the aggregator's job ends.
// A killed bank's error is expected; any other bank's or the
// aggregator's is returned.
func (j *saJob) run(ctx context.Context) (aggregator.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, secTimeout)
	defer cancel()
	for _, b := range j.banks {
		bctx, bcancel := context.WithCancel(ctx)
		b.cancel = bcancel
		go func() {
			defer close(b.done)
			b.res, b.err = b.agent.Run(bctx)
		}()
	}
	res, err := j.agg.Run(ctx)
	if err != nil {
		cancel()
	}
	errs := []error{err}
	for _, b := range j.banks {
		<-b.done
		if b.err != nil && !b.killed {
			errs = append(errs, fmt.Errorf("bank %s: %w", b.id, b.err))
		}
	}
	return res, errors.Join(errs...)
}

func (j *saJob) close() {
	for _, b := range j.banks {
		if b.agent != nil {
			b.agent.Close()
		}
	}
	if j.agg != nil {
		j.agg.Close()
	}
	j.local.Close()
}

// roundClosed is the close of round r, if it closed.
func (j *saJob) roundClosed(r uint64) (aggregator.RoundClosed, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, rc := range j.closes {
		if rc.Round == r {
			return rc, true
		}
	}
	return aggregator.RoundClosed{}, false
}

// saTap is a connection of the aggregator's key beside the aggregator: it
// sees what the aggregator's account may see (the banks' advertisements,
// masked inputs and reveals) and may publish what the aggregator may.
type saTap struct {
	tr     *bus.NATSTransport
	signer *bus.Signer
	job    string
	mu     sync.Mutex
	seq    uint64
}

func newSecAggTap(l *deploy.Local, party string) (*saTap, error) {
	signer, err := bus.CredsSigner(party, l.Creds(party))
	if err != nil {
		return nil, err
	}
	nc, err := bus.Connect(l.URL(), bus.ConnectOptions{Name: "tap-" + party, Creds: l.Creds(party)})
	if err != nil {
		return nil, err
	}
	return &saTap{tr: bus.NewNATSTransport(nc, true), signer: signer, job: l.Job(), seq: 1 << 40}, nil
}

// seal signs body as from, with a sequence number no honest party uses.
func (t *saTap) seal(kind bus.Kind, from string, round uint64, body any) ([]byte, error) {
	t.mu.Lock()
	t.seq++
	seq := t.seq
	t.mu.Unlock()
	return t.signer.Seal(bus.Envelope{Job: t.job, Kind: kind, From: from, Round: round, Seq: seq, Time: time.Now().UnixNano()}, body)
}

// send publishes a secagg message as from on the subject its kind takes.
func (t *saTap) send(ctx context.Context, from, subject string, msg any) error {
	o, err := bus.SecAggOutgoing(t.job, from, msg)
	if err != nil {
		return err
	}
	if subject == "" {
		subject = o.Subject
	}
	data, err := t.seal(o.Kind, from, o.Round, o.Body)
	if err != nil {
		return err
	}
	return t.tr.Publish(ctx, subject, data)
}

// secAggBody opens an envelope of a secure-aggregation kind.
func secAggBody(data []byte) (bus.Envelope, []byte, bool) {
	env, err := bus.Open(data)
	if err != nil {
		return env, nil, false
	}
	var b bus.SecAggBody
	if env.UnmarshalBody(&b) != nil {
		return env, nil, false
	}
	return env, b.Msg, true
}

// envRound is the round of an envelope on a secure subject (0 if it does
// not open).
func envRound(data []byte) uint64 {
	env, err := bus.Open(data)
	if err != nil {
		return 0
	}
	return env.Round
}

// subjectKind is the kind of a subject ("" if it is none of the job's).
func subjectKind(subject string) bus.Kind {
	p, err := bus.ParseSubject(subject)
	if err != nil {
		return ""
	}
	return p.Kind
}

// weightedMean is Σ w_i x_i / Σ w_i.
func weightedMean(xs [][]float32, ws []float64) []float64 {
	var total float64
	out := make([]float64, len(xs[0]))
	for i, x := range xs {
		for k, v := range x {
			out[k] += ws[i] * float64(v)
		}
		total += ws[i]
	}
	for k := range out {
		out[k] /= total
	}
	return out
}

// saEncoding is the fixed point of a closed secure round, for its error
// bound: W is twice the largest declared size (announceSecure).
func saEncoding(sc *aggregator.SecureClose, maxWeight float64) secagg.Encoding {
	return secagg.Encoding{Scale: sc.Scale, MaxWeight: uint64(2 * maxWeight), Parties: sc.Cohort}
}
