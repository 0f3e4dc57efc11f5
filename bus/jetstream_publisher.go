package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	// DefaultUpdatePublishAttempt bounds one attempt to store an update: a
	// 64 MiB update on a replicated stream takes a while to acknowledge.
	DefaultUpdatePublishAttempt = 10 * time.Second
	// DefaultUpdatePublishWindow bounds the retries of one update when the
	// caller's context has no deadline: long enough for a server restart
	// or a leader election, short enough that an agent pointed at a job
	// without an update stream fails instead of waiting forever.
	DefaultUpdatePublishWindow = time.Minute
)

// DurableTransport is a NATSTransport whose updates are stored in the job's
// update stream through JetStream: Publish on gf.<job>.update.<client>
// returns once the stream acknowledged the update, retrying across a
// server restart or a cluster's leader election until it does, ctx ends or
// DefaultUpdatePublishWindow passes.
// Every attempt carries the envelope's MsgID as Nats-Msg-Id, so an update
// whose acknowledgement was lost is stored once. Every other subject goes
// out as core NATS, as from the NATSTransport.
type DurableTransport struct {
	*NATSTransport
	js      jetstream.JetStream
	job     string
	pattern string
	retry   retryPolicy
}

// NewDurableTransport wraps t for job; the update stream must exist before
// the first update (the aggregator creates it: OpenUpdateLog).
func NewDurableTransport(t *NATSTransport, job string) (*DurableTransport, error) {
	if !ValidID(job) {
		return nil, fmt.Errorf("bus: durable transport: job %q does not match [a-z0-9-]{1,64}", job)
	}
	js, err := jetstream.New(t.Conn())
	if err != nil {
		return nil, fmt.Errorf("bus: durable transport of job %s: %w", job, err)
	}
	return &DurableTransport{NATSTransport: t, js: js, job: job, pattern: updateSubjects(job), retry: bulkRetry}, nil
}

// Publish implements Transport.
func (t *DurableTransport) Publish(ctx context.Context, subject string, data []byte) error {
	if !SubjectMatches(t.pattern, subject) {
		return t.NATSTransport.Publish(ctx, subject, data)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Sign before storing: the stored update is what the aggregator
	// verifies, possibly again after a restart.
	data, err := t.sign("publish "+subject, data)
	if err != nil {
		return err
	}
	env, err := Open(data)
	if err != nil {
		return fmt.Errorf("bus: durable publish %s: not an envelope: %w", subject, err)
	}
	id, stream := env.MsgID(), UpdateStreamName(t.job)
	ctx, cancel := bound(ctx, DefaultUpdatePublishWindow)
	defer cancel()
	err = retryJS(ctx, t.retry, func(ctx context.Context) error {
		_, err := t.js.Publish(ctx, subject, data, jetstream.WithMsgID(id), jetstream.WithExpectStream(stream))
		return err
	})
	if errors.Is(err, jetstream.ErrNoStreamResponse) {
		return fmt.Errorf("bus: durable publish %s: no stream %s stores it (is the aggregator durable?): %w", subject, stream, err)
	}
	if err != nil {
		return fmt.Errorf("bus: durable publish %s: %w", subject, err)
	}
	t.messages.Add(1)
	t.bytes.Add(int64(len(data)))
	return nil
}
