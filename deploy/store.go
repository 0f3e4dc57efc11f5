package deploy

import (
	"context"
	"fmt"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
)

// DurableOptions make an aggregator durable: its state in the job's
// JetStream KV bucket and object store, its updates from the job's update
// stream (docs/DEPLOY.md, "Surviving crashes"). Agents of such a job
// publish their updates durably too (AgentOptions.Durable).
type DurableOptions struct {
	Replicas int           // of the update stream, checkpoint bucket and model store when created; 0: 1
	AckWait  time.Duration // redelivery delay of an update a killed aggregator had not acknowledged; 0: bus.DefaultUpdateAckWait
	// Reannounce publishes the open round again after this long without
	// news (a lost announcement would otherwise idle the clients until the
	// deadline); 0: DefaultDurable's, negative: never.
	Reannounce time.Duration
	// LeaseTTL is how long the aggregator may go without renewing the
	// job's run lease before another may take the job over, and how long
	// a second one watches a held lease before it refuses or takes over;
	// 0: aggregator.DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// DefaultDurable is what `graphfed aggregator --durable` uses by default.
func DefaultDurable() DurableOptions {
	return DurableOptions{Replicas: 1, AckWait: bus.DefaultUpdateAckWait, Reannounce: 5 * time.Second}
}

// AggregatorStore opens the durable aggregator's checkpoint store and
// update log on tr's connection.
func AggregatorStore(ctx context.Context, tr *bus.NATSTransport, job string, o DurableOptions) (aggregator.Store, aggregator.UpdateLog, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.AckWait == 0 {
		o.AckWait = bus.DefaultUpdateAckWait
	}
	store, err := bus.OpenCheckpointStore(ctx, tr.Conn(), job, bus.CheckpointStoreOptions{Replicas: o.Replicas})
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: durable aggregator of %s: %w", job, err)
	}
	updates, err := bus.OpenUpdateLog(ctx, tr.Conn(), job, bus.UpdateLogOptions{Replicas: o.Replicas, AckWait: o.AckWait})
	if err != nil {
		return nil, nil, fmt.Errorf("deploy: durable aggregator of %s: %w", job, err)
	}
	return store, updates, nil
}
