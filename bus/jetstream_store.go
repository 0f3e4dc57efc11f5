package bus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrFenced says that another writer replaced the aggregator's checkpoint
// since this store last read or wrote it: two aggregators serve one job,
// and the one that sees this must stop.
var ErrFenced = errors.New("checkpoint written by another aggregator")

// CheckpointBucketName is job's KV bucket of aggregator state: GF_AGG_<JOB>.
func CheckpointBucketName(job string) string { return "GF_AGG_" + jobToken(job) }

// ModelBucketName is job's object store of global models: GF_MODELS_<JOB>.
func ModelBucketName(job string) string { return "GF_MODELS_" + jobToken(job) }

// checkpointKey is the KV key of the aggregator's latest state record.
const checkpointKey = "state"

// modelObject names the model of round r in the object store.
func modelObject(r uint64) string { return "model-" + strconv.FormatUint(r, 10) }

// CheckpointStoreOptions configure OpenCheckpointStore.
type CheckpointStoreOptions struct {
	Replicas int           // of the bucket and the object store when created; default 1
	Timeout  time.Duration // bounds the retries of each request without a deadline; default DefaultJSTimeout
}

// JetStreamCheckpointStore keeps an aggregator's checkpoints in JetStream:
// the state record under one key of a KV bucket (file storage, a short
// history for inspection), the models by round in an object store. State
// writes are conditional on the revision this store last read or wrote,
// which fences off a second aggregator of the same job (ErrFenced). Its
// methods are safe for concurrent use; it does not own the connection.
type JetStreamCheckpointStore struct {
	nc      *nats.Conn
	bucket  string
	kv      jetstream.KeyValue
	obj     jetstream.ObjectStore
	timeout time.Duration

	mu  sync.Mutex
	rev uint64 // revision of the state record last read or written; 0: none
}

// OpenCheckpointStore creates job's checkpoint bucket and model store, or
// binds to them.
func OpenCheckpointStore(ctx context.Context, nc *nats.Conn, job string, o CheckpointStoreOptions) (*JetStreamCheckpointStore, error) {
	const op = "bus: checkpoint store"
	if !ValidID(job) {
		return nil, fmt.Errorf("%s: job %q does not match [a-z0-9-]{1,64}", op, job)
	}
	if o.Replicas < 0 || o.Replicas > 5 || o.Timeout < 0 {
		return nil, fmt.Errorf("%s of job %s: %d replicas (want 1 to 5) or a negative timeout", op, job, o.Replicas)
	}
	o.Replicas = max(o.Replicas, 1)
	if o.Timeout == 0 {
		o.Timeout = DefaultJSTimeout
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("%s of job %s: %w", op, job, err)
	}
	s := &JetStreamCheckpointStore{nc: nc, bucket: CheckpointBucketName(job), timeout: o.Timeout}
	ctx, cancel := bound(ctx, o.Timeout)
	defer cancel()
	err = retryJS(ctx, createRetry, func(ctx context.Context) error {
		var err error
		s.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: s.bucket, Description: "graphfed aggregator checkpoints of job " + job,
			History: 4, Storage: jetstream.FileStorage, Replicas: o.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: bucket %s: %w", op, s.bucket, err)
	}
	err = retryJS(ctx, createRetry, func(ctx context.Context) error {
		var err error
		s.obj, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: ModelBucketName(job), Description: "graphfed global models of job " + job + ", by round",
			Storage: jetstream.FileStorage, Replicas: o.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: object store %s: %w", op, ModelBucketName(job), err)
	}
	return s, nil
}

// LoadState returns the latest state record, nil when the job has none.
func (s *JetStreamCheckpointStore) LoadState(ctx context.Context) ([]byte, error) {
	ctx, cancel := bound(ctx, s.timeout)
	defer cancel()
	var e jetstream.KeyValueEntry
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		e, err = s.kv.Get(ctx, checkpointKey)
		return err
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		s.rev = 0
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("bus: checkpoint store %s: load: %w", s.bucket, err)
	}
	s.rev = e.Revision()
	return e.Value(), nil
}

// SaveState replaces the state record and returns once it is stored. It
// fails with ErrFenced when the record changed since this store last read
// or wrote it.
func (s *JetStreamCheckpointStore) SaveState(ctx context.Context, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := bound(ctx, s.timeout)
	defer cancel()
	var rev uint64
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		if s.rev == 0 {
			rev, err = s.kv.Create(ctx, checkpointKey, data)
		} else {
			rev, err = s.kv.Update(ctx, checkpointKey, data, s.rev)
		}
		return err
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		// Refused: either an earlier attempt of this very write was
		// stored and its acknowledgement lost, or another writer moved on.
		cur, gerr := s.kv.Get(ctx, checkpointKey)
		if gerr == nil && bytes.Equal(cur.Value(), data) {
			rev, err = cur.Revision(), nil
		} else if gerr == nil || errors.Is(gerr, jetstream.ErrKeyNotFound) {
			err = fmt.Errorf("%w: %w", ErrFenced, err)
		}
	}
	if err != nil {
		return fmt.Errorf("bus: checkpoint store %s: save: %w", s.bucket, withEnded(ctx, err))
	}
	s.rev = rev
	return nil
}

// SaveModel stores the encoded model of round r (replacing one stored
// before under that round).
func (s *JetStreamCheckpointStore) SaveModel(ctx context.Context, r uint64, data []byte) error {
	ctx, cancel := bound(ctx, s.timeout)
	defer cancel()
	err := retryJS(ctx, bulkRetry, func(ctx context.Context) error {
		return putObject(ctx, s.nc, s.obj, modelObject(r), data)
	})
	if err != nil {
		return fmt.Errorf("bus: checkpoint store %s: save model of round %d: %w", s.bucket, r, withEnded(ctx, err))
	}
	return nil
}

// LoadModel reads the model of round r; the object store checks its digest.
func (s *JetStreamCheckpointStore) LoadModel(ctx context.Context, r uint64) ([]byte, error) {
	ctx, cancel := bound(ctx, s.timeout)
	defer cancel()
	var data []byte
	err := retryJS(ctx, bulkRetry, func(ctx context.Context) error {
		var err error
		data, err = s.obj.GetBytes(ctx, modelObject(r))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus: checkpoint store %s: load model of round %d: %w", s.bucket, r, err)
	}
	return data, nil
}

// withEnded adds ctx's end to err when ctx has ended and err does not say
// so already: nats.go reports a request cut short by its context as
// "nats: timeout", and a caller must be able to tell a store that failed
// from one whose context ended (errors.Is(err, context.Canceled)).
func withEnded(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	return err
}
