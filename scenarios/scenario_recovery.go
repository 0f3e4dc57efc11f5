package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/seeds"
)

// The recovery scenarios run a durable job on real NATS (the aggregator
// checkpointing to a JetStream KV bucket and object store and reading
// updates from the job's update stream, the agents storing their updates
// there) and strike it: a killed aggregator, a crashed agent, a restarted
// NATS server, a lost cluster node. recoveryJob is their harness: it
// starts the parties in-process and kills and restarts them on demand.

// recoveryConfig describes a durable job.
type recoveryConfig struct {
	job      string
	urls     string // the server, or a cluster's servers, comma-separated
	banks    int
	rounds   int
	seed     uint64
	replicas int           // of every stream, bucket and consumer: 3 on a 3-node cluster
	pace     time.Duration // each bank's pause per round: quiet spells to strike in
	log      zerolog.Logger
	// parties, when set, replaces the logistic FedAvg banks with another
	// task's parties (recovery_algos.go).
	parties *partySpec
}

// partySpec is a recovery job's task, round configuration and agents when
// they are not the logistic FedAvg banks.
type partySpec struct {
	task string
	// round is the aggregator's configuration; Rounds and MinClients are
	// the job's.
	round aggregator.Config
	ids   []string
	// agent is client i's options beyond the job, id, task, algorithm,
	// connection and durability: its data, privacy and epochs. It is
	// called for every start, so a restarted client builds a fresh learner.
	agent     func(i int) deploy.AgentOptions
	finalWait time.Duration
}

// id names client i of the job.
func (c recoveryConfig) id(i int) string {
	if c.parties != nil {
		return c.parties.ids[i]
	}
	return deploy.ClientID(i)
}

// recoveryJob is a running durable job.
type recoveryJob struct {
	cfg    recoveryConfig
	ctx    context.Context
	closes chan aggregator.RoundClosed

	mu     sync.Mutex
	agg    *runningAggregator
	agents []*runningAgent
}

type runningAggregator struct {
	cancel context.CancelFunc
	party  *deploy.Aggregator
	store  *crashStore
	done   chan struct{}
	res    aggregator.Result
	err    error
}

type runningAgent struct {
	cancel context.CancelFunc
	party  *deploy.Agent
	done   chan struct{}
	err    error
}

// startRecoveryJob creates the job's replicated ledger stream, then starts
// the aggregator and every agent.
func startRecoveryJob(ctx context.Context, cfg recoveryConfig) (*recoveryJob, error) {
	j := &recoveryJob{cfg: cfg, ctx: ctx, closes: make(chan aggregator.RoundClosed, 4*cfg.rounds+16),
		agents: make([]*runningAgent, cfg.banks)}
	if err := j.createLedger(); err != nil {
		return nil, err
	}
	if err := j.startAggregator(); err != nil {
		return nil, err
	}
	for i := range cfg.banks {
		if err := j.startAgent(i); err != nil {
			j.stop()
			return nil, err
		}
	}
	return j, nil
}

// createLedger creates the ledger stream with the job's replicas before
// the agents bind to it (a cluster may still be electing its JetStream
// leader, hence the retries).
func (j *recoveryJob) createLedger() error {
	tr, err := deploy.Conn(deploy.ConnOptions{URL: j.cfg.urls, Name: "setup"})
	if err != nil {
		return err
	}
	defer tr.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(j.ctx, 2*time.Second)
		err := deploy.EnsureLedgerStream(ctx, tr, j.cfg.job, j.cfg.replicas)
		cancel()
		if err == nil || time.Now().After(deadline) || j.ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startAggregator starts a durable aggregator, resuming from the job's
// checkpoint if there is one. Its checkpoint store is wrapped to crash on
// demand.
func (j *recoveryJob) startAggregator() error {
	ctx, cancel := context.WithCancel(j.ctx)
	a := &runningAggregator{cancel: cancel, done: make(chan struct{})}
	task, round, finalWait := deploy.TaskNode, aggregator.Config{Algo: aggregator.AlgoFedAvg, RoundTimeout: 30 * time.Second}, 3*time.Second
	if p := j.cfg.parties; p != nil {
		task, round, finalWait = p.task, p.round, p.finalWait
	}
	round.Rounds, round.MinClients = j.cfg.rounds, j.cfg.banks
	party, err := deploy.NewAggregator(ctx, deploy.AggregatorOptions{
		Job: j.cfg.job, Task: task, Conn: deploy.ConnOptions{URL: j.cfg.urls, Name: "aggregator"},
		Durable:  true,
		Resume:   true, // a restart continues the job from its checkpoint
		Recovery: deploy.DurableOptions{Replicas: j.cfg.replicas, AckWait: time.Second, Reannounce: 500 * time.Millisecond},
		Round:    round,
		InitSeed: j.cfg.seed, FinalWait: finalWait, Log: j.cfg.log,
		OnRound: func(rc aggregator.RoundClosed) {
			select {
			case j.closes <- rc:
			default:
			}
		},
		WrapStore: func(s aggregator.Store) aggregator.Store {
			a.store = &crashStore{Store: s}
			return a.store
		},
	})
	if err != nil {
		cancel()
		return fmt.Errorf("scenarios: %s: aggregator: %w", j.cfg.job, err)
	}
	a.party = party
	// A killed aggregator stops dead: its connection goes with it.
	a.store.kill = func() { cancel(); party.Close() }
	go func() {
		defer close(a.done)
		a.res, a.err = party.Run(ctx)
	}()
	j.mu.Lock()
	j.agg = a
	j.mu.Unlock()
	return nil
}

// killAggregator stops the aggregator at once, between two events.
func (j *recoveryJob) killAggregator() {
	j.mu.Lock()
	a := j.agg
	j.mu.Unlock()
	a.store.kill()
	<-a.done
}

// startAgent starts bank i: a fresh learner and gate (which replays the
// bank's ledger, so a restarted bank keeps its spent budget), updates
// stored through the update stream.
func (j *recoveryJob) startAgent(i int) error {
	id := j.cfg.id(i)
	o, err := j.agentOptions(i)
	if err != nil {
		return fmt.Errorf("scenarios: %s: %s: %w", j.cfg.job, id, err)
	}
	ctx, cancel := context.WithCancel(j.ctx)
	o.Job, o.ID, o.Conn, o.Durable = j.cfg.job, id, deploy.ConnOptions{URL: j.cfg.urls, Name: id}, true
	o.HelloRetry, o.Log = 200*time.Millisecond, j.cfg.log
	party, err := deploy.NewAgent(ctx, o)
	if err != nil {
		cancel()
		return fmt.Errorf("scenarios: %s: %s: %w", j.cfg.job, id, err)
	}
	ra := &runningAgent{cancel: cancel, party: party, done: make(chan struct{})}
	go func() {
		defer close(ra.done)
		_, ra.err = party.Run(ctx)
	}()
	j.mu.Lock()
	j.agents[i] = ra
	j.mu.Unlock()
	return nil
}

// agentOptions are client i's task, algorithm, learner and privacy: the
// job's parties', or a logistic FedAvg bank paced by cfg.pace.
func (j *recoveryJob) agentOptions(i int) (deploy.AgentOptions, error) {
	if p := j.cfg.parties; p != nil {
		o := p.agent(i)
		o.Task, o.Algo = p.task, p.round.Algo
		return o, nil
	}
	l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: j.cfg.seed, DataSeed: seeds.Party(j.cfg.seed, i, seeds.Sampler)})
	if err != nil {
		return deploy.AgentOptions{}, err
	}
	return deploy.AgentOptions{Task: deploy.TaskNode, Algo: aggregator.AlgoFedAvg, Privacy: logisticPrivacy(j.cfg.seed, i),
		Learner: l, Slowdown: j.cfg.pace}, nil
}

// logisticPrivacy is bank i's gate in the scenarios' logistic jobs: little
// noise, seeded per bank.
func logisticPrivacy(seed uint64, i int) deploy.PrivacyOptions {
	p := deploy.DefaultPrivacy()
	p.ModelSigma, p.ModelClip = 0.01, 10
	noise := seeds.Party(seed, i, seeds.Noise)
	p.NoiseSeed = &noise
	return p
}

// killAgent stops bank i at once.
func (j *recoveryJob) killAgent(i int) {
	j.mu.Lock()
	a := j.agents[i]
	j.mu.Unlock()
	a.cancel()
	a.party.Close()
	<-a.done
}

// waitClosed waits until round r has closed.
func (j *recoveryJob) waitClosed(r uint64, timeout time.Duration) error {
	t := time.After(timeout)
	for {
		select {
		case rc := <-j.closes:
			if rc.Round >= r {
				return nil
			}
		case <-t:
			return fmt.Errorf("round %d did not close within %v", r, timeout)
		case <-j.ctx.Done():
			return j.ctx.Err()
		}
	}
}

// finish waits for the job to end and returns the aggregator's result.
func (j *recoveryJob) finish(timeout time.Duration) (aggregator.Result, error) {
	j.mu.Lock()
	a, agents := j.agg, append([]*runningAgent(nil), j.agents...)
	j.mu.Unlock()
	select {
	case <-a.done:
	case <-time.After(timeout):
		j.stop()
		return aggregator.Result{}, fmt.Errorf("the job did not finish within %v", timeout)
	}
	defer j.stop()
	if a.err != nil {
		return a.res, a.err
	}
	var errs []error
	for i, ra := range agents {
		select {
		case <-ra.done:
			if ra.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", j.cfg.id(i), ra.err))
			}
		case <-time.After(10 * time.Second):
			errs = append(errs, fmt.Errorf("%s did not finish", j.cfg.id(i)))
		}
	}
	return a.res, errors.Join(errs...)
}

// stop ends every party still running.
func (j *recoveryJob) stop() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.agg != nil {
		j.agg.cancel()
		j.agg.party.Close()
	}
	for _, a := range j.agents {
		if a != nil {
			a.cancel()
			a.party.Close()
		}
	}
}

// crashStore passes checkpoints through until armed; the armed write kills
// the aggregator, having stored its record first when save is set: a
// kill -9 just after, or just before, a checkpoint reaches the disk.
type crashStore struct {
	aggregator.Store
	kill func()

	mu      sync.Mutex
	left    int // writes until the crash; 0: disarmed
	save    bool
	crashed chan struct{}
}

var errKilled = errors.New("scenarios: aggregator killed")

// arm makes the n-th state write from now the last.
func (c *crashStore) arm(n int, save bool) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left, c.save, c.crashed = n, save, make(chan struct{})
	return c.crashed
}

// SaveState implements aggregator.Store.
func (c *crashStore) SaveState(ctx context.Context, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return c.Store.SaveState(ctx, data)
	}
	if c.left--; c.left > 0 {
		return c.Store.SaveState(ctx, data)
	}
	if c.save {
		if err := c.Store.SaveState(ctx, data); err != nil {
			return err
		}
	}
	c.kill()
	close(c.crashed)
	return errKilled
}
