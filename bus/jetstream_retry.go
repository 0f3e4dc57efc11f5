package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// transientJS reports whether a JetStream request that failed with err may
// succeed if repeated: the server did not answer (restarting, a connection
// being re-established, a cluster electing a stream leader) or answered
// that it is temporarily unavailable. An answer that refuses the request
// (wrong stream, message too large, a failed expectation) is final, and so
// is a closed connection.
func transientJS(err error) bool {
	for _, final := range []error{nats.ErrConnectionClosed, nats.ErrBadSubject, nats.ErrMaxPayload,
		jetstream.ErrMsgNotFound, jetstream.ErrKeyNotFound, jetstream.ErrObjectNotFound,
		jetstream.ErrStreamNotFound, jetstream.ErrConsumerNotFound, jetstream.ErrBucketNotFound,
		// A server or account without JetStream does not gain it by waiting.
		jetstream.ErrJetStreamNotEnabled, jetstream.ErrJetStreamNotEnabledForAccount} {
		if errors.Is(err, final) {
			return false
		}
	}
	var jsErr jetstream.JetStreamError
	if errors.As(err, &jsErr) && jsErr.APIError() != nil {
		// 503: no stream leader or JetStream not ready yet; 408: the
		// request timed out inside the cluster.
		code := jsErr.APIError().Code
		return code == 503 || code == 408
	}
	return err != nil
}

// retryPolicy bounds the repetition of one idempotent JetStream request.
type retryPolicy struct {
	attempt time.Duration // timeout of each attempt
	first   time.Duration // pause after the first failure, doubling
	most    time.Duration // longest pause
}

// defaultRetry fits small requests (acks, KV and ledger writes): a stream
// leader election on a loopback or LAN cluster takes a few seconds.
var defaultRetry = retryPolicy{attempt: 2 * time.Second, first: 50 * time.Millisecond, most: time.Second}

// createRetry fits the creation of a stream, bucket or consumer: on a
// cluster it is a proposal to the meta group and a new raft group, which
// takes seconds when the servers fsync every write on a busy machine; an
// attempt cut short would only be repeated.
var createRetry = retryPolicy{attempt: 10 * time.Second, first: 100 * time.Millisecond, most: time.Second}

// bulkRetry fits requests that carry a model or an update, up to 64 MiB.
var bulkRetry = retryPolicy{attempt: DefaultUpdatePublishAttempt, first: 50 * time.Millisecond, most: time.Second}

// retryJS calls do until it succeeds, fails for good (transientJS), or ctx
// ends; do must be idempotent, as every request graphfed repeats is (a
// publish under a Nats-Msg-Id, a KV write of the whole record, a read).
// The last error is returned, joined with ctx's when that ended it.
func retryJS(ctx context.Context, p retryPolicy, do func(ctx context.Context) error) error {
	pause := p.first
	for {
		actx, cancel := context.WithTimeout(ctx, p.attempt)
		err := do(actx)
		cancel()
		if err == nil || !transientJS(err) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, p.most)
	}
}
