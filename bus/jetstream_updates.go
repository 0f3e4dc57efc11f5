package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The job's update stream is the aggregator's write-ahead log: agents
// publish their updates into it through JetStream (DurableTransport), and
// the aggregator reads them with one durable pull consumer, acknowledging
// each only once a checkpoint that includes it is stored. An update is thus
// never lost by a crash of the aggregator or of a NATS server (the stream
// is on disk, replicated on a cluster), and a redelivered one is caught by
// the round logic's duplicate detection.

const (
	// UpdateConsumerName is the aggregator's durable consumer.
	UpdateConsumerName = "aggregator"
	// DefaultUpdateDuplicates is the update stream's de-duplication window:
	// an update retried within it under the same envelope MsgID is stored once.
	DefaultUpdateDuplicates = 2 * time.Minute
	// DefaultUpdateAckWait is how long an update delivered to the aggregator
	// may stay unacknowledged before it is delivered again: the in-flight
	// updates of an aggregator killed mid-round come back after it.
	DefaultUpdateAckWait = 5 * time.Second
	// DefaultJSTimeout bounds the retries of one request of the update log
	// and the checkpoint store when the caller's context has no deadline.
	DefaultJSTimeout = 30 * time.Second
	// DefaultUpdatesPerSender is the most messages the update stream keeps
	// on one sender's subject when the job's rounds are not known.
	DefaultUpdatesPerSender = 4096
)

// UpdatesPerSender is the update stream's per-sender bound for a job of
// rounds rounds (0: unknown): a few updates a round (a resend after a
// rejoin, FedBuff's several) and room for restarts. A sender past it has
// its next message refused by the stream (discard new per subject): a
// flood on a bank's own update subject stops at the bank's own bound,
// and the aggregator reads at most that many of its messages, while every
// other bank's subject is untouched.
func UpdatesPerSender(rounds int) int {
	if rounds <= 0 {
		return DefaultUpdatesPerSender
	}
	return 4*rounds + 64
}

// jobToken is a job id as a stream or bucket name token: uppercased, '-'
// replaced by '_' (job ids are [a-z0-9-], so distinct jobs stay distinct).
func jobToken(job string) string { return strings.ToUpper(strings.ReplaceAll(job, "-", "_")) }

// UpdateStreamName is job's update stream: GF_UPDATES_<JOB>.
func UpdateStreamName(job string) string { return "GF_UPDATES_" + jobToken(job) }

// updateSubjects is the update stream's only subject, gf.<job>.update.*.
func updateSubjects(job string) string { return Subject(job, KindUpdate, "*") }

// UpdateLogOptions configure the update stream (when this call creates
// it) and the aggregator's consumer.
type UpdateLogOptions struct {
	Replicas   int           // of the stream and the consumer; default 1, use 3 on a 3-node cluster
	Duplicates time.Duration // default DefaultUpdateDuplicates
	AckWait    time.Duration // default DefaultUpdateAckWait
	Timeout    time.Duration // default DefaultJSTimeout
	// PerSender bounds the messages kept on one sender's update subject
	// of a stream this call creates (UpdatesPerSender); 0:
	// DefaultUpdatesPerSender.
	PerSender int
}

func (o *UpdateLogOptions) defaults() error {
	if o.Replicas < 0 || o.Replicas > 5 || o.Duplicates < 0 || o.AckWait < 0 || o.Timeout < 0 {
		return fmt.Errorf("replicas %d (want 1 to 5) or a negative duration", o.Replicas)
	}
	o.Replicas = max(o.Replicas, 1)
	if o.Duplicates == 0 {
		o.Duplicates = DefaultUpdateDuplicates
	}
	if o.AckWait == 0 {
		o.AckWait = DefaultUpdateAckWait
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultJSTimeout
	}
	if o.PerSender <= 0 {
		o.PerSender = DefaultUpdatesPerSender
	}
	return nil
}

// bound gives ctx the timeout d unless it has a deadline.
func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// EnsureUpdateStream creates job's update stream, or binds to it and checks
// that it keeps what the aggregator's checkpoints refer to: file storage,
// limits retention (a work queue would delete acknowledged updates that a
// checkpoint's open round still names) and exactly the job's update subject.
func EnsureUpdateStream(ctx context.Context, js jetstream.JetStream, job string, o UpdateLogOptions) (jetstream.Stream, error) {
	name := UpdateStreamName(job)
	fail := func(err error) (jetstream.Stream, error) {
		return nil, fmt.Errorf("bus: update stream %s: %w", name, err)
	}
	if !ValidID(job) {
		return fail(fmt.Errorf("job %q does not match [a-z0-9-]{1,64}", job))
	}
	if err := o.defaults(); err != nil {
		return fail(err)
	}
	ctx, cancel := bound(ctx, o.Timeout)
	defer cancel()
	var st jetstream.Stream
	err := retryJS(ctx, createRetry, func(ctx context.Context) error {
		var err error
		st, err = js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			st, err = js.CreateStream(ctx, jetstream.StreamConfig{
				Name:        name,
				Description: "graphfed updates of job " + job + " (the aggregator's write-ahead log)",
				Subjects:    []string{updateSubjects(job)},
				Retention:   jetstream.LimitsPolicy,
				Storage:     jetstream.FileStorage,
				Replicas:    o.Replicas,
				Duplicates:  o.Duplicates,
				Discard:     jetstream.DiscardNew,
				// Per sender, not per stream: one bank's flood fills its
				// own subject only (UpdatesPerSender).
				MaxMsgsPerSubject:    int64(o.PerSender),
				DiscardNewPerSubject: true,
			})
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				st, err = js.Stream(ctx, name)
			}
		}
		return err
	})
	if err != nil {
		return fail(err)
	}
	c := st.CachedInfo().Config
	var bad []string
	if !slices.Equal(c.Subjects, []string{updateSubjects(job)}) {
		bad = append(bad, fmt.Sprintf("subjects %v, want exactly [%s]", c.Subjects, updateSubjects(job)))
	}
	if c.Retention != jetstream.LimitsPolicy {
		bad = append(bad, "retention "+c.Retention.String()+" removes acknowledged updates")
	}
	if c.Storage != jetstream.FileStorage {
		bad = append(bad, "storage "+c.Storage.String()+", not file")
	}
	if c.Replicas < o.Replicas {
		bad = append(bad, fmt.Sprintf("%d replicas, want %d", c.Replicas, o.Replicas))
	}
	if len(bad) > 0 {
		return fail(errors.New(strings.Join(bad, "; ")))
	}
	return st, nil
}

// LoggedMsg is an update delivered from the log: the message, its position
// (stream sequence), how often it was delivered, and its acknowledgement,
// to be called once the aggregator's checkpoint includes it.
type LoggedMsg struct {
	Msg
	Seq       uint64
	Delivered uint64
	Ack       func(ctx context.Context) error
}

// JetStreamUpdateLog is the aggregator's durable pull consumer on job's
// update stream. It does not own the connection.
type JetStreamUpdateLog struct {
	name    string
	stream  jetstream.Stream
	cons    jetstream.Consumer
	timeout time.Duration
}

// OpenUpdateLog ensures job's update stream and the aggregator's durable
// consumer on it (a restarted aggregator binds to the same consumer and
// receives every update not acknowledged yet).
func OpenUpdateLog(ctx context.Context, nc *nats.Conn, job string, o UpdateLogOptions) (*JetStreamUpdateLog, error) {
	if err := o.defaults(); err != nil {
		return nil, fmt.Errorf("bus: update log of job %s: %w", job, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: update log of job %s: %w", job, err)
	}
	st, err := EnsureUpdateStream(ctx, js, job, o)
	if err != nil {
		return nil, err
	}
	l := &JetStreamUpdateLog{name: UpdateStreamName(job), stream: st, timeout: o.Timeout}
	ctx, cancel := bound(ctx, o.Timeout)
	defer cancel()
	err = retryJS(ctx, createRetry, func(ctx context.Context) error {
		var err error
		l.cons, err = st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       UpdateConsumerName,
			Description:   "graphfed aggregator of job " + job,
			DeliverPolicy: jetstream.DeliverAllPolicy,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       o.AckWait,
			MaxDeliver:    -1,
			FilterSubject: updateSubjects(job),
			Replicas:      o.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus: update log %s: consumer %s: %w", l.name, UpdateConsumerName, err)
	}
	// A replicated consumer answers pulls only once its group has a
	// leader; a pull sent before that is lost until the pull expires.
	err = retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		info, err := l.cons.Info(ctx)
		if err == nil && info.Cluster != nil && info.Cluster.Leader == "" {
			err = errNoLeader
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus: update log %s: consumer %s: %w", l.name, UpdateConsumerName, err)
	}
	return l, nil
}

// errNoLeader says a replicated consumer has no leader yet (transient).
var errNoLeader = errors.New("no leader elected yet")

// Stream names the update stream.
func (l *JetStreamUpdateLog) Stream() string { return l.name }

// Consume delivers every unacknowledged update to h, serially, redelivering
// those not acknowledged within the ack wait, until stop is called. It
// survives reconnections; onErr hears of the consumer's problems (missed
// heartbeats during a server restart, a leader change).
func (l *JetStreamUpdateLog) Consume(h func(LoggedMsg), onErr func(error)) (stop func(), err error) {
	// Pulls expire after 5 s (nats.go: 30 s), so that one lost to a leader
	// election or a restart is noticed, by its missing heartbeats, within
	// seconds rather than half a minute.
	opts := []jetstream.PullConsumeOpt{jetstream.PullMaxMessages(64), jetstream.PullExpiry(5 * time.Second)}
	if onErr != nil {
		opts = append(opts, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { onErr(err) }))
	}
	cc, err := l.cons.Consume(func(m jetstream.Msg) {
		md, err := m.Metadata()
		if err != nil {
			if onErr != nil {
				onErr(fmt.Errorf("bus: update log %s: metadata: %w", l.name, err))
			}
			return
		}
		h(LoggedMsg{
			Msg: Msg{Subject: m.Subject(), Data: m.Data()}, Seq: md.Sequence.Stream, Delivered: md.NumDelivered,
			// A double ack: the server confirms that the update will not
			// come back. A failed one is harmless: the update is
			// redelivered and dropped as a duplicate.
			Ack: func(ctx context.Context) error {
				ctx, cancel := bound(ctx, defaultRetry.attempt)
				defer cancel()
				if err := m.DoubleAck(ctx); err != nil {
					return fmt.Errorf("bus: update log %s: ack seq %d: %w", l.name, md.Sequence.Stream, err)
				}
				return nil
			},
		})
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: update log %s: consume: %w", l.name, err)
	}
	return cc.Stop, nil
}

// Get re-reads the update stored at stream sequence seq (a restored
// checkpoint's open round names its updates so).
func (l *JetStreamUpdateLog) Get(ctx context.Context, seq uint64) (Msg, error) {
	ctx, cancel := bound(ctx, l.timeout)
	defer cancel()
	var raw *jetstream.RawStreamMsg
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		raw, err = l.stream.GetMsg(ctx, seq)
		return err
	})
	if err != nil {
		return Msg{}, fmt.Errorf("bus: update log %s: get seq %d: %w", l.name, seq, err)
	}
	return Msg{Subject: raw.Subject, Data: raw.Data}, nil
}
