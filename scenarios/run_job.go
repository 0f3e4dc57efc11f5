package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/seeds"
)

// runAgentsBeside runs every agent beside the aggregator until the
// aggregator's job ends, and waits for the agents. An agent's failure or
// the aggregator's cancels ctx (through cancel), so that nobody waits for
// a deadline that cannot come. It returns the aggregator's result, each
// agent's error named by its id (ids[i] for agents[i]), and the
// aggregator's error.
func runAgentsBeside(ctx context.Context, cancel context.CancelFunc, agg *deploy.Aggregator, agents []*deploy.Agent, ids []string) (aggregator.Result, []error, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(agents))
	for i, a := range agents {
		wg.Go(func() {
			if _, err := a.Run(ctx); err != nil {
				errs[i] = fmt.Errorf("agent %s: %w", ids[i], err)
				cancel()
			}
		})
	}
	res, err := agg.Run(ctx)
	if err != nil {
		cancel()
	}
	wg.Wait()
	return res, errs, err
}

// logisticLearners are n logistic-regression learners of one task (seed),
// each with its own samples: the scenarios' cheap FedAvg banks.
func logisticLearners(n, dim, samples int, seed uint64) ([]*agent.LogisticLearner, error) {
	var ls []*agent.LogisticLearner
	for i := range n {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: dim, Samples: samples, TaskSeed: seed, DataSeed: seeds.Party(seed, i, seeds.Sampler)})
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// fedavgParties is a FedAvg job of logistic banks on a local deployment,
// every round closing at a quorum of all of them.
type fedavgParties struct {
	ids         []string // ids[i] runs learners[i]
	learners    []*agent.LogisticLearner
	rounds      int
	localEpochs int
	durable     bool
	slowdown    time.Duration
	onRound     func(aggregator.RoundClosed)
}

// startFedAvg builds the aggregator and the agents of p on local; close
// releases them all.
func startFedAvg(ctx context.Context, local *deploy.Local, job string, o ScenarioOptions, p fedavgParties) (agg *deploy.Aggregator, agents []*deploy.Agent, close func(), err error) {
	close = func() {
		for _, a := range agents {
			a.Close()
		}
		if agg != nil {
			agg.Close()
		}
	}
	agg, err = deploy.NewAggregator(ctx, local.AggregatorOptions(deploy.AggregatorOptions{
		Job: job, Task: deploy.TaskNode, InitSeed: o.Seed, FinalWait: 300 * time.Millisecond, Log: o.Log, OnRound: p.onRound,
		Durable: p.durable,
		Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: p.rounds, MinClients: len(p.ids),
			Quorum: len(p.ids), RoundTimeout: time.Minute}}))
	if err != nil {
		return nil, nil, func() {}, err
	}
	for i, l := range p.learners {
		a, err := deploy.NewAgent(ctx, local.AgentOptions(deploy.AgentOptions{ID: p.ids[i], Job: job,
			Task: deploy.TaskNode, Algo: aggregator.AlgoFedAvg, Learner: l, LocalEpochs: p.localEpochs, Durable: p.durable,
			Slowdown: p.slowdown, Privacy: logisticPrivacy(o.Seed, i), Log: o.Log}))
		if err != nil {
			close()
			return nil, nil, func() {}, err
		}
		agents = append(agents, a)
	}
	return agg, agents, close, nil
}
