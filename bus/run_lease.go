package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrLeaseConflict says that a conditional write of a job's run lease
// found the key created, or moved on since the revision given, by another
// writer (aggregator.AcquireLease decides what that means).
var ErrLeaseConflict = errors.New("the run lease was written by another aggregator")

// RunLeaseKey is the key of a job's run lease in its checkpoint bucket
// (CheckpointBucketName). It sits beside the state record, so that the
// aggregator needs no bucket, stream or permission beyond its checkpoint
// bucket's, and whoever may write the checkpoint is whoever may take the
// lease.
const RunLeaseKey = "lease"

// JetStreamRunLease is a job's run lease key: reads, and writes that are
// conditional on the key's absence or on its latest revision. It holds no
// policy (aggregator.AcquireLease and aggregator.Lease do) and is safe for
// concurrent use; it does not own the connection.
type JetStreamRunLease struct {
	bucket  string
	kv      jetstream.KeyValue
	timeout time.Duration
}

// OpenRunLease binds to job's checkpoint bucket, which OpenCheckpointStore
// creates. timeout bounds the retries of each request without a
// deadline; 0: DefaultJSTimeout.
func OpenRunLease(ctx context.Context, nc *nats.Conn, job string, timeout time.Duration) (*JetStreamRunLease, error) {
	const op = "bus: run lease"
	if !ValidID(job) {
		return nil, fmt.Errorf("%s: job %q does not match [a-z0-9-]{1,64}", op, job)
	}
	if timeout <= 0 {
		timeout = DefaultJSTimeout
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("%s of job %s: %w", op, job, err)
	}
	l := &JetStreamRunLease{bucket: CheckpointBucketName(job), timeout: timeout}
	ctx, cancel := bound(ctx, timeout)
	defer cancel()
	err = retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		l.kv, err = js.KeyValue(ctx, l.bucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s of job %s: bucket %s: %w", op, job, l.bucket, err)
	}
	return l, nil
}

// Get returns the lease record and its revision; nil and 0 when the key
// has never been written (or was deleted).
func (l *JetStreamRunLease) Get(ctx context.Context) ([]byte, uint64, error) {
	ctx, cancel := bound(ctx, l.timeout)
	defer cancel()
	var e jetstream.KeyValueEntry
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		e, err = l.kv.Get(ctx, RunLeaseKey)
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, fmt.Errorf("bus: run lease %s: read: %w", l.bucket, withEnded(ctx, err))
	}
	return e.Value(), e.Revision(), nil
}

// Create writes the first record, failing with ErrLeaseConflict when the
// key exists. A repeated attempt whose predecessor was stored fails so
// too: the caller compares the record (aggregator.Lease does).
func (l *JetStreamRunLease) Create(ctx context.Context, data []byte) (uint64, error) {
	return l.write(ctx, "create", func(ctx context.Context) (uint64, error) { return l.kv.Create(ctx, RunLeaseKey, data) })
}

// Update replaces the record if its latest revision is rev, failing with
// ErrLeaseConflict otherwise.
func (l *JetStreamRunLease) Update(ctx context.Context, data []byte, rev uint64) (uint64, error) {
	return l.write(ctx, "update", func(ctx context.Context) (uint64, error) { return l.kv.Update(ctx, RunLeaseKey, data, rev) })
}

func (l *JetStreamRunLease) write(ctx context.Context, what string, do func(context.Context) (uint64, error)) (uint64, error) {
	ctx, cancel := bound(ctx, l.timeout)
	defer cancel()
	var rev uint64
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		rev, err = do(ctx)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		err = fmt.Errorf("%w: %w", ErrLeaseConflict, err)
	}
	if err != nil {
		return 0, fmt.Errorf("bus: run lease %s: %s: %w", l.bucket, what, withEnded(ctx, err))
	}
	return rev, nil
}
