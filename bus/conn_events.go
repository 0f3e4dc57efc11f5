package bus

import (
	"errors"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// ConnEvents logs and counts what happens to a party's connection: the
// client library dropping messages for a slow subscription, the server
// cutting the connection (as a slow consumer, among other causes),
// reconnections and other asynchronous errors. Nothing of this was
// visible before issue 14: a flood cut the aggregator off and nothing was
// logged. Safe for concurrent use; Connect installs it.
type ConnEvents struct {
	log   zerolog.Logger
	party string

	slow, disconnects, reconnects, errs, dialFailures atomic.Int64
	// onError receives the asynchronous errors that are not slow-consumer
	// drops (permission violations above all).
	onError func(error)
}

// NewConnEvents returns the events of party's connection, logged to log.
func NewConnEvents(party string, log zerolog.Logger) *ConnEvents {
	return &ConnEvents{party: party, log: log}
}

// ConnCounts are a connection's event counters.
type ConnCounts struct {
	// SlowConsumer counts the times a subscription of this client fell
	// behind and the client library dropped messages (nats.go reports the
	// first drop of each episode; Dropped on the subscription counts them).
	SlowConsumer int64 `json:"slow_consumer"`
	Disconnects  int64 `json:"disconnects"`
	Reconnects   int64 `json:"reconnects"`
	// Errors counts the other asynchronous errors (permission violations).
	Errors int64 `json:"errors"`
	// DialFailures counts failed attempts to (re)connect. Connect retries
	// a failed first dial in the background, so without this a party that
	// never reached the server (a full file-descriptor table, a wrong
	// address) showed only as a request timing out much later.
	DialFailures int64 `json:"dial_failures"`
}

// Counts returns the counters so far; a nil ConnEvents counts nothing.
func (e *ConnEvents) Counts() ConnCounts {
	if e == nil {
		return ConnCounts{}
	}
	return ConnCounts{SlowConsumer: e.slow.Load(), Disconnects: e.disconnects.Load(),
		Reconnects: e.reconnects.Load(), Errors: e.errs.Load(), DialFailures: e.dialFailures.Load()}
}

// options are the nats.go handlers that feed e.
func (e *ConnEvents) options() []nats.Option {
	return []nats.Option{
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) { e.asyncError(sub, err) }),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // the party closed it: no event
			}
			n := e.disconnects.Add(1)
			l := e.log.Warn().Str("party", e.party).Int64("disconnects", n).Str("server", nc.ConnectedUrlRedacted())
			if err != nil {
				// The server names its reason: "slow consumer", an
				// authorization violation, a stale connection.
				l = l.Err(err)
			}
			l.Msg("nats: disconnected")
		}),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			// Logged at the first failure and then at powers of two: the
			// client retries every ReconnectWait for as long as it takes.
			n := e.dialFailures.Add(1)
			if n&(n-1) != 0 || nc.IsClosed() {
				return
			}
			l := e.log.Warn().Str("party", e.party).Int64("dial_failures", n)
			if err != nil {
				l = l.Err(err)
			}
			l.Msg("nats: cannot reach the server; retrying")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			n := e.reconnects.Add(1)
			e.log.Info().Str("party", e.party).Int64("reconnects", n).Str("server", nc.ConnectedUrlRedacted()).
				Msg("nats: reconnected")
		}),
	}
}

func (e *ConnEvents) asyncError(sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		n := e.slow.Add(1)
		l := e.log.Warn().Str("party", e.party).Int64("slow_consumer_events", n)
		if sub != nil {
			l = l.Str("subject", sub.Subject)
			if d, derr := sub.Dropped(); derr == nil {
				l = l.Int("dropped", d)
			}
			if m, b, perr := sub.Pending(); perr == nil {
				l = l.Int("pending_msgs", m).Int("pending_bytes", b)
			}
		}
		l.Msg("nats: slow consumer, messages dropped by the client")
		return
	}
	e.errs.Add(1)
	if e.onError != nil {
		e.onError(err)
		return
	}
	l := e.log.Warn().Str("party", e.party).Err(err)
	if sub != nil {
		l = l.Str("subject", sub.Subject)
	}
	l.Msg("nats: asynchronous error")
}
