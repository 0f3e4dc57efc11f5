package deploy

import (
	"context"
	"fmt"
	"sync"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
)

// JobResult is a job run to the end by RunParties.
type JobResult struct {
	Aggregator aggregator.Result
	Agents     []agent.Result // in the order the agents were given
	// Messages and Bytes count what every party published, replies
	// included.
	Messages, Bytes int64
	// Traffic is the same per message kind (bus.NATSTransport.Traffic).
	Traffic map[bus.Kind]bus.Traffic
}

// RunParties runs a job's aggregator and agents until the aggregator is
// done; the agents then finish on the aggregator's done message. If the
// aggregator fails, the agents are stopped. The parties are not closed.
func RunParties(ctx context.Context, agg *Aggregator, agents []*Agent) (JobResult, error) {
	res := JobResult{Agents: make([]agent.Result, len(agents))}
	errs := make([]error, len(agents))
	actx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Agents[i], errs[i] = a.Run(actx)
		}()
	}
	var err error
	res.Aggregator, err = agg.Run(ctx)
	if err != nil {
		stop()
	}
	wg.Wait()
	m, b := agg.Transport().Stats()
	res.Messages, res.Bytes = m, b
	res.Traffic = agg.Transport().Traffic()
	for _, a := range agents {
		m, b := a.Transport().Stats()
		res.Messages += m
		res.Bytes += b
		bus.AddTraffic(res.Traffic, a.Transport().Traffic())
	}
	if err != nil {
		return res, fmt.Errorf("deploy: run: %w", err)
	}
	for i, e := range errs {
		if e != nil {
			return res, fmt.Errorf("deploy: run: agent %s: %w", agents[i].ID(), e)
		}
	}
	return res, nil
}
