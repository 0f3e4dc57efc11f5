package bus

import (
	"context"
	"strings"
)

// Msg is a received message.
type Msg struct {
	Subject string
	Reply   string
	Data    []byte
	// Pre, when set, is Data's signature digest computed ahead (Prehash);
	// Endpoint.Open uses it instead of hashing again.
	Pre *Prehash
}

// Handler receives messages. A transport calls the handler of one
// subscription serially, in arrival order, across all of its subjects, so
// that a round-open that follows its model is never seen first
// (SubscribeBounded, the aggregator's, keeps the order per subject only).
type Handler func(Msg)

// Subscription is an active subscription.
type Subscription interface {
	Unsubscribe() error
}

// Transport is what agents and aggregators need from a message bus. NATS is
// the real one (NATSTransport); InmemTransport is the in-process double used
// by unit tests.
type Transport interface {
	// Publish sends data on subject.
	Publish(ctx context.Context, subject string, data []byte) error
	// Subscribe delivers messages on any of subjects to h, serially.
	Subscribe(h Handler, subjects ...string) (Subscription, error)
	// Request publishes and waits for one reply.
	Request(ctx context.Context, subject string, data []byte) ([]byte, error)
	// Respond answers a request.
	Respond(m Msg, data []byte) error
	// Flush waits until everything published so far reached the server.
	Flush(ctx context.Context) error
	// Stats counts what this transport published: messages and bytes.
	Stats() (messages, bytes int64)
	// Close releases the connection.
	Close() error
}

// SubjectMatches reports whether subject matches a NATS pattern with the
// wildcards '*' (one token) and '>' (the rest).
func SubjectMatches(pattern, subject string) bool {
	p := strings.Split(pattern, ".")
	s := strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) {
			return false
		}
		if tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(p) == len(s)
}
