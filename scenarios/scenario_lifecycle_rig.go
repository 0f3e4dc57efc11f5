package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/seeds"
)

// The lifecycle scenarios run a small durable FedAvg job of three banks on
// a real embedded server started from the configuration `graphfed keys`
// writes (deploy.LocalOptions.Secure: every party logs in with its own key
// under its permissions, every envelope signed), built by deploy as the
// CLI builds it. A run is stopped the way the CLI stops it on SIGINT (its
// context ends with the signal as cause) and resumed as --resume does.

const (
	lifeBanks  = 3
	lifeRounds = 6
	// lifeSkew is the clock skew the aggregator allows hellos: the two runs
	// of a scenario follow each other within milliseconds.
	lifeSkew = 20 * time.Millisecond
	// lifeExitBound is how soon after the aggregator stops its agents must
	// have exited (issue 14: 5 s).
	lifeExitBound = 5 * time.Second
)

// lifeRig is a job's environment and what a recorder with the
// aggregator's key recorded of it: every hello and done, raw. In the
// accounts layout only the aggregator's account receives the banks'
// hellos; a bank replaying its own, as these scenarios do, holds them
// anyway, having sent them.
type lifeRig struct {
	o     ScenarioOptions
	local *deploy.Local
	rec   *nats.Conn

	mu     sync.Mutex
	hellos []*nats.Msg
	dones  []*nats.Msg
}

func startLifeRig(ctx context.Context, job string, o ScenarioOptions) (*lifeRig, error) {
	var banks []string
	for i := range lifeBanks {
		banks = append(banks, deploy.ClientID(i))
	}
	l, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: banks, Secure: true})
	if err != nil {
		return nil, err
	}
	r := &lifeRig{o: o, local: l}
	c := l.Conn(bus.AggregatorID)
	if r.rec, err = bus.Connect(c.URL, bus.ConnectOptions{Name: "recorder", Creds: c.Creds}); err != nil {
		l.Close()
		return nil, err
	}
	record := func(into *[]*nats.Msg) nats.MsgHandler {
		return func(m *nats.Msg) {
			r.mu.Lock()
			*into = append(*into, m)
			r.mu.Unlock()
		}
	}
	_, err1 := r.rec.Subscribe(bus.Subject(job, bus.KindHello, "*"), record(&r.hellos))
	_, err2 := r.rec.Subscribe(bus.Subject(job, bus.KindDone), record(&r.dones))
	if err := errors.Join(err1, err2, r.rec.Flush()); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *lifeRig) close() {
	if r.rec != nil {
		r.rec.Close()
	}
	r.local.Close()
}

// recorded returns copies of what was recorded so far.
func (r *lifeRig) recorded() (hellos, dones []*nats.Msg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*nats.Msg(nil), r.hellos...), append([]*nats.Msg(nil), r.dones...)
}

// recordedDone is recorded once the recorder has taken a done (or after
// lifeRecordWait): the done reaches the recorder on its own connection and
// handler goroutine, so a run can return before it is recorded (seen in
// CI: "the first run sent no done to replay").
func (r *lifeRig) recordedDone(ctx context.Context) (hellos, dones []*nats.Msg) {
	_ = r.rec.Flush() // what the server sent before its PONG is queued to the handler
	deadline := time.Now().Add(lifeRecordWait)
	for {
		hellos, dones = r.recorded()
		if len(dones) > 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return hellos, dones
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lifeRecordWait bounds recordedDone's wait.
const lifeRecordWait = 5 * time.Second

// lifeRun is one run of the job: its aggregator's result and error, and
// each agent's, with when it returned.
type lifeRun struct {
	agg      aggregator.Result
	aggErr   error
	agents   []agent.Result
	agentErr []error
	exited   []time.Time
	stopAt   time.Time // when the aggregator's context was cancelled (zero: not)
}

// runOpts say what a run does while it runs.
type runOpts struct {
	resume bool
	// stopAfter, when positive, cancels the aggregator's context with the
	// cause "received SIGINT" once that round closed, as the CLI does.
	stopAfter uint64
	// during, when set, runs once round duringAfter closed.
	during      func(ctx context.Context) error
	duringAfter uint64
}

// run builds the aggregator and the agents as the CLI does and runs them.
func (r *lifeRig) run(ctx context.Context, ro runOpts) (lifeRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	actx, stopAgg := context.WithCancelCause(ctx)
	defer stopAgg(nil)
	closed := make(chan uint64, lifeRounds+1)
	agg, err := deploy.NewAggregator(ctx, r.local.AggregatorOptions(deploy.AggregatorOptions{
		Job: r.local.Job(), Task: deploy.TaskNode, Durable: true, Resume: ro.resume, HelloSkew: lifeSkew,
		Recovery: deploy.DurableOptions{AckWait: time.Second, Reannounce: -1},
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: lifeRounds, MinClients: lifeBanks,
			Quorum: lifeBanks, RoundTimeout: time.Minute},
		InitSeed: r.o.Seed, FinalWait: 2 * time.Second, Log: r.o.Log,
		OnRound: func(rc aggregator.RoundClosed) { closed <- rc.Round },
	}))
	if err != nil {
		return lifeRun{}, err
	}
	defer agg.Close()
	var agents []*deploy.Agent
	defer func() {
		for _, a := range agents {
			a.Close()
		}
	}()
	for i := range lifeBanks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: r.o.Seed, DataSeed: seeds.Party(r.o.Seed, i, seeds.Sampler)})
		if err != nil {
			return lifeRun{}, err
		}
		a, err := deploy.NewAgent(ctx, r.local.AgentOptions(deploy.AgentOptions{ID: deploy.ClientID(i), Job: r.local.Job(),
			Task: deploy.TaskNode, Algo: aggregator.AlgoFedAvg, Durable: true, Learner: l, LocalEpochs: 2,
			Slowdown: 40 * time.Millisecond, Privacy: logisticPrivacy(r.o.Seed, i), Log: r.o.Log}))
		if err != nil {
			return lifeRun{}, err
		}
		agents = append(agents, a)
	}
	run := lifeRun{agents: make([]agent.Result, lifeBanks), agentErr: make([]error, lifeBanks), exited: make([]time.Time, lifeBanks)}
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			run.agents[i], run.agentErr[i] = a.Run(ctx)
			run.exited[i] = time.Now()
		})
	}
	aggDone := make(chan struct{})
	go func() {
		defer close(aggDone)
		run.agg, run.aggErr = agg.Run(actx)
	}()
	var duringErr error
	for waiting := true; waiting; {
		select {
		case r := <-closed:
			if ro.during != nil && r == ro.duringAfter {
				duringErr = ro.during(ctx)
			}
			if ro.stopAfter > 0 && r == ro.stopAfter {
				run.stopAt = time.Now()
				stopAgg(errors.New("received SIGINT"))
			}
		case <-aggDone:
			waiting = false
		}
	}
	// Agents that outlive a stopped aggregator by the bound are stopped
	// here, so that the scenario reports them instead of hanging.
	late := time.AfterFunc(lifeExitBound+5*time.Second, cancel)
	wg.Wait()
	late.Stop()
	return run, duringErr
}

// publishAs publishes recorded messages, byte for byte, on a connection of
// party (which may publish on their subjects), and returns how many.
func (r *lifeRig) publishAs(party string, msgs []*nats.Msg) (int, error) {
	c := r.local.Conn(party)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "replayer-" + party, Creds: c.Creds})
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	for _, m := range msgs {
		if err := nc.Publish(m.Subject, m.Data); err != nil {
			return 0, err
		}
	}
	return len(msgs), nc.Flush()
}

// stoppedCleanly checks a run stopped after round stopAfter: the
// aggregator returned its result so far with the stop reason and told the
// agents, and every agent left with *agent.JobStopped within the bound.
func stoppedCleanly(name string, run lifeRun, stopAfter uint64) (Outcome, bool) {
	var se *aggregator.StoppedError
	if !errors.As(run.aggErr, &se) || !se.Notified || run.agg.Stopped == "" || uint64(len(run.agg.Closes)) < stopAfter {
		return fail(name, "report-written", "aggregator stopped with %v, result stopped=%q after %d rounds; want a StoppedError with the agents told and the rounds so far",
			run.aggErr, run.agg.Stopped, len(run.agg.Closes)), false
	}
	var slowest time.Duration
	for i, err := range run.agentErr {
		var js *agent.JobStopped
		if !errors.As(err, &js) || js.Reason != run.agg.Stopped {
			return fail(name, "agents-exit", "%s returned %v, want the aggregator's stop (%q)", deploy.ClientID(i), err, run.agg.Stopped), false
		}
		slowest = max(slowest, run.exited[i].Sub(run.stopAt))
	}
	if slowest > lifeExitBound {
		return fail(name, "agents-exit", "the last agent left %v after the aggregator stopped, over %v", slowest, lifeExitBound), false
	}
	return Outcome{Metrics: map[string]float64{"agents_exit_seconds": slowest.Seconds(), "rounds_before_stop": float64(len(run.agg.Closes))}}, true
}

// finishedCleanly checks a run went to its last round with every bank in
// every round and every agent finished normally.
func finishedCleanly(name string, run lifeRun) (Outcome, bool) {
	if run.aggErr != nil {
		return fail(name, InvNoProgress, "aggregator: %v", run.aggErr), false
	}
	if !run.agg.Resumed {
		return fail(name, InvNoProgress, "the second run did not resume the job from its checkpoint"), false
	}
	for _, rc := range run.agg.Closes {
		if len(rc.In) != lifeBanks {
			return fail(name, InvResultChanged, "round %d counted %v, want the %d banks", rc.Round, rc.In, lifeBanks), false
		}
	}
	if n := len(run.agg.Closes); n != lifeRounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", n, lifeRounds), false
	}
	for i, err := range run.agentErr {
		if err != nil || run.agents[i].Final == nil {
			return fail(name, InvNoProgress, "%s did not finish the job: %v", deploy.ClientID(i), err), false
		}
	}
	return Outcome{}, true
}

func lifeErr(name string, err error) error { return fmt.Errorf("scenarios: %s: %w", name, err) }
