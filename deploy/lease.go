package deploy

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
)

// A durable aggregator takes the job's run lease (aggregator.AcquireLease)
// before anything that a second aggregator of a running job must not do:
// subscribing, announcing, creating the ledger or the blob buckets,
// rebinding the update stream's consumer with its own options. Only the
// checkpoint bucket, where the lease lives, is opened first.

// releaseWait bounds releasing the lease at the end of a run, whose
// context may be over.
const releaseWait = 2 * time.Second

// durableParts are a durable aggregator's store, update log and lease.
type durableParts struct {
	store   aggregator.Store
	updates aggregator.UpdateLog
	lease   *heldLease
}

// heldLease is the lease an Aggregator releases when it is done.
type heldLease struct {
	*aggregator.Lease
	log zerolog.Logger
}

// openDurable opens job's checkpoint store, takes the job's lease for a
// fresh run, then opens the update log. A live holder makes it fail with
// aggregator.ErrJobRunning.
func openDurable(ctx context.Context, tr *bus.NATSTransport, o AggregatorOptions, rec DurableOptions) (durableParts, error) {
	const op = "deploy: durable aggregator"
	if rec.AckWait == 0 {
		rec.AckWait = bus.DefaultUpdateAckWait
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	run, err := bus.NewRunID(now())
	if err != nil {
		return durableParts{}, fmt.Errorf("%s of %s: %w", op, o.Job, err)
	}
	store, err := bus.OpenCheckpointStore(ctx, tr.Conn(), o.Job, bus.CheckpointStoreOptions{Replicas: max(rec.Replicas, 1)})
	if err != nil {
		return durableParts{}, fmt.Errorf("%s of %s: %w", op, o.Job, err)
	}
	ls, err := bus.OpenRunLease(ctx, tr.Conn(), o.Job, 0)
	if err != nil {
		return durableParts{}, fmt.Errorf("%s of %s: %w", op, o.Job, err)
	}
	host, _ := os.Hostname() // only named in a second aggregator's refusal
	// The lease runs on the real clock, whatever o.Now: its TTL is time
	// that another aggregator waits out on its own.
	lease, err := aggregator.AcquireLease(ctx, ls, aggregator.LeaseConfig{Job: o.Job, Run: run, TTL: rec.LeaseTTL,
		Host: host, PID: os.Getpid(), Log: o.Log})
	if err != nil {
		return durableParts{}, err
	}
	updates, err := bus.OpenUpdateLog(ctx, tr.Conn(), o.Job, bus.UpdateLogOptions{Replicas: max(rec.Replicas, 1), AckWait: rec.AckWait,
		PerSender: bus.UpdatesPerSender(o.Round.Rounds)})
	if err != nil {
		lease.Release(context.WithoutCancel(ctx))
		return durableParts{}, fmt.Errorf("%s of %s: %w", op, o.Job, err)
	}
	return durableParts{store: store, updates: updates, lease: &heldLease{Lease: lease, log: o.Log}}, nil
}

// releaseLease ends the run's hold on the job, so that the next aggregator
// need not wait for it to lapse; once the round server has stopped, or
// when it never started.
func (a *Aggregator) releaseLease(ctx context.Context) {
	if a.lease == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
	defer cancel()
	if err := a.lease.Release(rctx); err != nil {
		a.lease.log.Warn().Err(err).Msg("releasing the job's lease")
	}
}
