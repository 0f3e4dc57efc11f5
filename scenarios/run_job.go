package scenarios

import (
	"context"
	"fmt"
	"sync"

	"graphfed/aggregator"
	"graphfed/deploy"
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
