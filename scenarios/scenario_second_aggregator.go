package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/seeds"
)

// The second-aggregator scenario (issue 28, item 4) tries to get a second
// aggregator into a running job on a real server configured as `graphfed
// keys` configures one (deploy.LocalOptions.Secure), with the aggregator's
// own key: a durable job of three banks runs, and once round 2 closed a
// second `aggregator --resume` is started. It must be refused, naming the
// run that holds the job, before it has published anything on
// gf.<job>.>: a tap subscribed there in the aggregator's account sees
// nothing from the aggregator while the first one is held still (its
// round loop waits in OnRound; its lease renews on its own) and the
// second one tries, the second one's own transport counts no message sent
// on a job subject or an inbox, and no round or done of the whole job
// names a run other than the job's. Later the first aggregator is killed
// at a checkpoint write (its connection cut, its lease left to lapse), a
// `--resume` one takes the job over once the lease lapsed, the agents
// follow it, and the job finishes with the final model of a run that
// nobody disturbed, bit for bit.

const (
	saBanks  = 3
	saRounds = 7
	// saIntrudeAfter is the round after whose close the intruder starts.
	saIntrudeAfter = 2
	// saKillRound is the round in which the first aggregator is killed.
	saKillRound = 5
	// saLeaseTTL is the job's lease TTL: the takeover waits about this long.
	saLeaseTTL = 2 * time.Second
	saTimeout  = 2 * time.Minute
)

// Invariants of the scenario.
const (
	// InvSecondAggregatorRan: the second aggregator was not refused as the
	// job's second one.
	InvSecondAggregatorRan = "second-aggregator-ran"
	// InvSecondAggregatorSpoke: the second aggregator published on a job
	// subject or an inbox, or a round or done of another run went out.
	InvSecondAggregatorSpoke = "second-aggregator-spoke"
	// InvAgentsLeftRun: an agent was pulled off the job's run, or did not
	// follow the run that took a crashed one over.
	InvAgentsLeftRun = "agents-left-run"
)

func secondAggregatorScenario() Scenario {
	const name = "second-aggregator"
	return Scenario{
		Name: name,
		Doc: "a second aggregator --resume started mid-job with the aggregator's own key (secure server) is refused before it publishes anything on gf.<job>.>, " +
			"the job's model is unchanged; the first one killed, a --resume one takes over once its lease lapsed and the job finishes with that model",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*saTimeout)
			defer cancel()
			ref, err := runSecondAggregatorJob(ctx, name+"-ref", o, false)
			if err != nil {
				return Outcome{}, lifeErr(name, err)
			}
			if ref.firstErr != nil || len(ref.first.Closes) != saRounds {
				return fail(name, InvNoProgress, "the undisturbed run: %v after %d rounds", ref.firstErr, len(ref.first.Closes)), nil
			}
			run, err := runSecondAggregatorJob(ctx, name, o, true)
			if err != nil {
				return Outcome{}, lifeErr(name, err)
			}
			return judgeSecondAggregator(name, aggregator.ResultDigest(ref.first), run), nil
		},
	}
}

// saMsg is one message the tap received.
type saMsg struct {
	subject string
	data    []byte
}

// saRun is what a run of the job left to judge.
type saRun struct {
	first, resumer       aggregator.Result
	firstErr, resumerErr error
	agentErr             []error
	agentRejects         []map[string]uint64

	intruderErr  error
	intruderSent map[bus.Kind]bus.Traffic
	intruderTook time.Duration
	window       []saMsg // tapped while the intruder tried, the first aggregator held still
	tapped       []saMsg // the whole job
	takeoverTook time.Duration
}

// saRig is the job's environment: a secure embedded server and the tap.
type saRig struct {
	o     ScenarioOptions
	local *deploy.Local
	tap   *nats.Conn

	mu     sync.Mutex
	tapped []saMsg
}

func startSARig(ctx context.Context, job string, o ScenarioOptions) (*saRig, error) {
	var banks []string
	for i := range saBanks {
		banks = append(banks, deploy.ClientID(i))
	}
	l, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: banks, Secure: true})
	if err != nil {
		return nil, err
	}
	r := &saRig{o: o, local: l}
	c := l.Conn(bus.AggregatorID)
	if r.tap, err = bus.Connect(c.URL, bus.ConnectOptions{Name: "tap", Creds: c.Creds}); err != nil {
		l.Close()
		return nil, err
	}
	_, err = r.tap.Subscribe("gf."+job+".>", func(m *nats.Msg) {
		r.mu.Lock()
		r.tapped = append(r.tapped, saMsg{subject: m.Subject, data: m.Data})
		r.mu.Unlock()
	})
	if err := errors.Join(err, r.tap.Flush()); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *saRig) close() {
	r.tap.Close()
	r.local.Close()
}

// mark is how many messages the tap holds once everything the transports
// sent before has reached it: each flush returns once the server has
// handled what its connection sent, and the tap's once it has delivered
// what it queued for the tap before.
func (r *saRig) mark(ctx context.Context, trs ...*bus.NATSTransport) int {
	for _, tr := range trs {
		_ = tr.Flush(ctx) // a closed transport sends nothing more anyway
	}
	_ = r.tap.Flush()
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tapped)
}

func (r *saRig) since(n int) []saMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tapped[n:])
}

// aggregatorOptions are the job's aggregator as the CLI builds it for
// `aggregator --durable [--resume]`, on transport tr.
func (r *saRig) aggregatorOptions(resume bool, tr *bus.NATSTransport) deploy.AggregatorOptions {
	return r.local.AggregatorOptions(deploy.AggregatorOptions{
		Job: r.local.Job(), Task: deploy.TaskNode, Durable: true, Resume: resume, Transport: tr,
		Recovery: deploy.DurableOptions{AckWait: time.Second, Reannounce: 500 * time.Millisecond, LeaseTTL: saLeaseTTL},
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: saRounds, MinClients: saBanks,
			Quorum: saBanks, RoundTimeout: time.Minute},
		InitSeed: r.o.Seed, FinalWait: 2 * time.Second, Log: r.o.Log,
	})
}

// runSecondAggregatorJob runs the job; with strike, the intruder tries
// after round saIntrudeAfter and the first aggregator is killed in round
// saKillRound, a resumer taking over.
func runSecondAggregatorJob(ctx context.Context, job string, o ScenarioOptions, strike bool) (saRun, error) {
	ctx, cancel := context.WithTimeout(ctx, saTimeout)
	defer cancel()
	r, err := startSARig(ctx, job, o)
	if err != nil {
		return saRun{}, err
	}
	defer r.close()
	run := saRun{agentErr: make([]error, saBanks), agentRejects: make([]map[string]uint64, saBanks)}

	trA, err := deploy.Conn(r.local.Conn(bus.AggregatorID))
	if err != nil {
		return saRun{}, err
	}
	defer trA.Close()
	closed := make(chan uint64, 2*saRounds+2)
	var crash *crashStore
	fo := r.aggregatorOptions(false, trA)
	fo.OnRound = func(rc aggregator.RoundClosed) {
		if strike && rc.Round == saIntrudeAfter {
			// The first aggregator's round loop waits here; its lease
			// renews on its own goroutine, as it does through a long step.
			r.intrude(ctx, trA, &run)
		}
		closed <- rc.Round
	}
	fo.WrapStore = func(s aggregator.Store) aggregator.Store {
		// A kill -9: the connection goes, the lease is left to lapse.
		crash = &crashStore{Store: s, kill: func() { trA.Close() }}
		return crash
	}
	first, err := deploy.NewAggregator(ctx, fo)
	if err != nil {
		return saRun{}, fmt.Errorf("first aggregator: %w", err)
	}
	defer first.Close()

	var agents []*deploy.Agent
	defer func() {
		for _, a := range agents {
			a.Close()
		}
	}()
	for i := range saBanks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
		if err != nil {
			return saRun{}, err
		}
		a, err := deploy.NewAgent(ctx, r.local.AgentOptions(deploy.AgentOptions{ID: deploy.ClientID(i), Job: job,
			Task: deploy.TaskNode, Algo: aggregator.AlgoFedAvg, Durable: true, Learner: l, LocalEpochs: 2,
			Slowdown: 40 * time.Millisecond, Privacy: logisticPrivacy(o.Seed, i), Log: o.Log}))
		if err != nil {
			return saRun{}, err
		}
		agents = append(agents, a)
	}
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			res, err := a.Run(ctx)
			run.agentErr[i], run.agentRejects[i] = err, res.Rejects
		})
	}
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		run.first, run.firstErr = first.Run(ctx)
	}()

	if strike {
		if err := killAndResume(ctx, r, closed, firstDone, &crash, &run); err != nil {
			// Judged after the intruder: a job it disturbed may never
			// reach the kill.
			run.resumerErr = err
			cancel()
		}
	}
	<-firstDone
	wg.Wait()
	run.tapped = r.since(0)
	return run, nil
}

// intrude starts a second aggregator with the aggregator's key for the
// running job, as `aggregator --durable --resume`, and records what it did
// while the first one (trA) is held still.
func (r *saRig) intrude(ctx context.Context, trA *bus.NATSTransport, run *saRun) {
	tr, err := deploy.Conn(r.local.Conn(bus.AggregatorID))
	if err != nil {
		run.intruderErr = fmt.Errorf("scenario: the intruder's connection: %w", err)
		return
	}
	defer tr.Close()
	from := r.mark(ctx, trA)
	began := time.Now()
	second, err := deploy.NewAggregator(ctx, r.aggregatorOptions(true, tr))
	run.intruderTook = time.Since(began)
	if err == nil {
		// Not refused: let it show what it would have done.
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _ = second.Run(sctx)
		cancel()
		second.Close()
	}
	run.intruderErr = err
	run.window = r.since(0)[from:r.mark(ctx, trA, tr)]
	run.intruderSent = tr.TrafficOf(bus.DirectionSent)
}

// killAndResume arms the first aggregator's crash at a checkpoint write of
// round saKillRound and, once it crashed, starts a --resume aggregator,
// which waits for the lease to lapse and finishes the job.
func killAndResume(ctx context.Context, r *saRig, closed <-chan uint64, firstDone <-chan struct{}, crash **crashStore, run *saRun) error {
	for waiting := true; waiting; {
		select {
		case rd := <-closed:
			waiting = rd != saKillRound-1
		case <-firstDone:
			return fmt.Errorf("the first aggregator ended before round %d closed: %v", saKillRound-1, run.firstErr)
		case <-ctx.Done():
			return fmt.Errorf("round %d did not close: %w", saKillRound-1, ctx.Err())
		}
	}
	crashed := (*crash).arm(2, r.o.Seed%2 == 0)
	select {
	case <-crashed:
	case <-firstDone:
		return fmt.Errorf("the first aggregator ended before its crash in round %d: %v", saKillRound, run.firstErr)
	case <-ctx.Done():
		return ctx.Err()
	}
	<-firstDone
	began := time.Now()
	resumer, err := deploy.NewAggregator(ctx, r.aggregatorOptions(true, nil))
	if err != nil {
		return fmt.Errorf("the --resume aggregator after the crash: %w", err)
	}
	defer resumer.Close()
	run.takeoverTook = time.Since(began)
	run.resumer, run.resumerErr = resumer.Run(ctx)
	return nil
}

// judgeSecondAggregator checks a struck run against the undisturbed run's
// final model(s).
func judgeSecondAggregator(name, want string, run saRun) Outcome {
	var running *aggregator.JobRunningError
	switch {
	case !errors.As(run.intruderErr, &running) || running.Run != run.first.Run ||
		!strings.Contains(run.intruderErr.Error(), "refusing to start a second aggregator"):
		return fail(name, InvSecondAggregatorRan, "the second aggregator: %v; want a refusal naming run %s", run.intruderErr, run.first.Run)
	}
	for k, t := range run.intruderSent {
		if k != bus.ChannelJetStream && t.Messages > 0 {
			return fail(name, InvSecondAggregatorSpoke, "the refused aggregator sent %d messages on %s", t.Messages, k)
		}
	}
	for _, m := range run.window {
		if env, err := bus.Open(m.data); err == nil && env.From == bus.AggregatorID {
			return fail(name, InvSecondAggregatorSpoke, "a %s from the aggregator on %s while the first one was held still and the second one tried", env.Kind, m.subject)
		}
	}
	runs := []string{run.first.Run, run.resumer.Run}
	var taken []string // runs the resumer announced as ended
	for _, m := range run.tapped {
		env, err := bus.Open(m.data)
		if err != nil || env.From != bus.AggregatorID {
			continue
		}
		var r string
		switch env.Kind {
		case bus.KindRound:
			var b bus.RoundOpen
			if env.UnmarshalBody(&b) != nil {
				continue
			}
			r = b.Run
			if r == run.resumer.Run {
				taken = b.Ended
			}
		case bus.KindDone:
			var b bus.Done
			if env.UnmarshalBody(&b) != nil {
				continue
			}
			r = b.Run
		default:
			continue
		}
		if !slices.Contains(runs, r) {
			return fail(name, InvSecondAggregatorSpoke, "a %s of run %q went out; the job's runs are %v", env.Kind, r, runs)
		}
	}
	for i, err := range run.agentErr {
		if err != nil {
			return fail(name, InvAgentsLeftRun, "%s: %v", deploy.ClientID(i), err)
		}
		if n := run.agentRejects[i][bus.ReasonOtherRun]; n > 0 {
			return fail(name, InvAgentsLeftRun, "%s rejected %d messages of a run it did not follow: one went out", deploy.ClientID(i), n)
		}
	}
	if !slices.Contains(taken, run.first.Run) {
		return fail(name, InvAgentsLeftRun, "the resumer's rounds name %v as ended, not the crashed run %s", taken, run.first.Run)
	}
	switch {
	case run.resumerErr != nil || !run.resumer.Resumed || len(run.resumer.Closes) != saRounds:
		return fail(name, InvNoProgress, "the --resume aggregator after the crash: %v, resumed %v, %d of %d rounds",
			run.resumerErr, run.resumer.Resumed, len(run.resumer.Closes), saRounds)
	case aggregator.ResultDigest(run.resumer) != want:
		return fail(name, InvResultChanged, "final model %s, %s without the intruder and the crash", aggregator.ResultDigest(run.resumer)[:16], want[:16])
	}
	return Outcome{Metrics: map[string]float64{
		"intruder_refused_seconds": run.intruderTook.Seconds(),
		"intruder_window_messages": float64(len(run.window)),
		"takeover_seconds":         run.takeoverTook.Seconds(),
		"resumed_round":            float64(run.resumer.ResumedRound),
		"model_bit_identical":      1,
	}}
}
