package bus

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// ConnectOptions configure a client connection.
type ConnectOptions struct {
	Name string
	// Creds is a NATS credentials file: a user JWT with its seed (from
	// nsc), or a bare NKey user seed file as `graphfed keys` writes them,
	// which is then used as NKey would be. Empty: none.
	Creds string
	// NKey is an NKey user seed file. With a seed (here or in Creds) the
	// connection's inboxes are InboxPrefix(public key): replies name the
	// party's key, whatever account it is in.
	NKey string
	// TLSCA, TLSCert and TLSKey are the party's mutual TLS files (PEM):
	// the CA the server's certificate must chain to (empty: the system's
	// trust store), and the party's own certificate and key, which the
	// server checks against its CA (`graphfed keys --tls` writes them all).
	// Any of them makes TLS required: the connection fails rather than
	// fall back to plain text, whatever the URL's scheme.
	TLSCA, TLSCert, TLSKey string
	// OnError receives the server's asynchronous errors, permission
	// violations above all: NATS reports a refused publish or
	// subscription only this way. Nil: nats.go's default handler, which
	// prints them to stderr.
	OnError func(error)
	// Events, when set, logs and counts slow-consumer drops, disconnects,
	// reconnects and asynchronous errors (which it passes on to OnError).
	Events *ConnEvents
	// ReconnectWait and MaxReconnects keep clients alive across a server restart.
	ReconnectWait time.Duration
	MaxReconnects int
	// InProcess, when set, connects to that embedded server through an
	// in-memory pipe instead of a socket: no file descriptor and no TCP
	// stack per party, which is what lets one process hold 10,000 agents.
	// The NATS protocol, permissions and subjects are unchanged.
	InProcess nats.InProcessConnProvider
}

// InboxPrefix is the inbox prefix of the party whose NKey user public key
// is pub: _INBOX.<pub>. Replies to its requests (hello, JetStream API)
// arrive below it, and only it may subscribe there, so no party reads
// another's replies.
func InboxPrefix(pub string) string { return "_INBOX." + pub }

// Connect dials url (comma-separated for a cluster) with reconnection on.
func Connect(url string, o ConnectOptions) (*nats.Conn, error) {
	wait := o.ReconnectWait
	if wait == 0 {
		wait = 250 * time.Millisecond
	}
	maxRe := o.MaxReconnects
	if maxRe == 0 {
		maxRe = -1
	}
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.ReconnectWait(wait),
		nats.MaxReconnects(maxRe),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectBufSize(256 << 20),
	}
	if o.InProcess != nil {
		opts = append(opts, nats.InProcessServer(o.InProcess))
	}
	tlsOpts, err := o.tlsOptions()
	if err != nil {
		return nil, fmt.Errorf("bus: connect %s: %w", url, err)
	}
	opts = append(opts, tlsOpts...)
	seed := o.NKey
	if o.Creds != "" {
		jwt, err := credsHoldJWT(o.Creds)
		switch {
		case err != nil:
			return nil, fmt.Errorf("bus: connect %s: %w", url, err)
		case jwt:
			opts = append(opts, nats.UserCredentials(o.Creds))
		case seed != "" && seed != o.Creds:
			return nil, fmt.Errorf("bus: connect %s: two NKey seeds, %s and %s", url, o.Creds, seed)
		default:
			seed = o.Creds
		}
	}
	if seed != "" {
		kp, err := LoadSeedFile(seed)
		if err != nil {
			return nil, fmt.Errorf("bus: connect %s: %w", url, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("bus: connect %s: nkey: %w", url, err)
		}
		opts = append(opts, nats.Nkey(pub, kp.Sign), nats.CustomInboxPrefix(InboxPrefix(pub)))
	}
	switch {
	case o.Events != nil:
		o.Events.onError = o.OnError
		opts = append(opts, o.Events.options()...)
	case o.OnError != nil:
		opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { o.OnError(err) }))
	default:
		// Without a handler nats.go prints each asynchronous error to
		// stderr; a library never prints. Callers that care pass OnError
		// or Events.
		opts = append(opts, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect %s: %w", url, err)
	}
	return nc, nil
}

// tlsOptions maps the TLS files to nats.go's options. nats.RootCAs and
// nats.ClientCert read the files at once, so a missing or malformed file
// fails Connect instead of every reconnection, and both mark the
// connection secure: nats.go then refuses a server that offers no TLS and
// upgrades a nats:// URL when the server requires it.
func (o ConnectOptions) tlsOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, fmt.Errorf("tls: a client certificate needs its key and a key its certificate (cert %q, key %q)", o.TLSCert, o.TLSKey)
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	if len(opts) > 0 && o.InProcess != nil {
		return nil, fmt.Errorf("tls: an in-process connection has no TLS")
	}
	return opts, nil
}

// credsHoldJWT reads a credentials file and reports whether it is a JWT
// creds file rather than a bare NKey seed.
func credsHoldJWT(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("credentials: %w", err)
	}
	defer wipe(data)
	return isJWTCreds(data), nil
}

// NATSTransport is the Transport over a nats.go connection.
type NATSTransport struct {
	nc       *nats.Conn
	own      bool
	signer   atomic.Pointer[Signer]
	messages atomic.Int64
	bytes    atomic.Int64
	byKind   trafficByKind
	wg       sync.WaitGroup
	blobs    atomic.Pointer[blobSetting]
}

// blobSetting is what SetBlobs set.
type blobSetting struct {
	store  BlobStore
	inline int
}

// NewNATSTransport wraps nc; with own set, Close also closes nc.
func NewNATSTransport(nc *nats.Conn, own bool) *NATSTransport {
	return &NATSTransport{nc: nc, own: own}
}

// Conn exposes the connection (JetStream, credentials tests).
func (t *NATSTransport) Conn() *nats.Conn { return t.nc }

// SetSigner makes the transport sign every envelope it publishes, requests
// or responds with, as s's party; data that is not an envelope from that
// party is refused. Nil: envelopes go as sealed (the default).
func (t *NATSTransport) SetSigner(s *Signer) { t.signer.Store(s) }

// sign applies the signer, if any, to outgoing data.
func (t *NATSTransport) sign(op string, data []byte) ([]byte, error) {
	s := t.signer.Load()
	if s == nil {
		return data, nil
	}
	out, err := s.SignSealed(data)
	if err != nil {
		return nil, fmt.Errorf("bus: %s: %w", op, err)
	}
	return out, nil
}

// SetBlobs makes the transport's endpoints send updates and models whose
// sealed envelopes are over inline bytes by reference through store, and
// read bodies sent so by others from it (Endpoint.Publish, Endpoint.Open).
// inline 0 is three quarters of the server's payload limit
// (InlineLimitFor); a nil store sends everything inline.
func (t *NATSTransport) SetBlobs(store BlobStore, inline int) {
	t.blobs.Store(&blobSetting{store: store, inline: inline})
}

// Carriage implements Carrier: the blob store and inline limit SetBlobs
// set, and the server's payload limit as the connection learnt it.
func (t *NATSTransport) Carriage() Carriage {
	c := Carriage{MaxPayload: int(t.nc.MaxPayload())}
	if b := t.blobs.Load(); b != nil && b.store != nil {
		c.Blobs, c.Inline = b.store, b.inline
		if c.Inline <= 0 {
			c.Inline = InlineLimitFor(t.nc.MaxPayload())
		}
	}
	return c
}

// Publish implements Transport.
func (t *NATSTransport) Publish(ctx context.Context, subject string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := t.sign("publish "+subject, data)
	if err != nil {
		return err
	}
	if err := t.nc.Publish(subject, data); err != nil {
		return fmt.Errorf("bus: publish %s: %w", subject, err)
	}
	t.messages.Add(1)
	t.bytes.Add(int64(len(data)))
	t.byKind.add(DirectionSent, subject, len(data))
	return nil
}

type natsSub struct {
	subs []*nats.Subscription
	ch   chan *nats.Msg
	once sync.Once
}

func (s *natsSub) Unsubscribe() error {
	var first error
	for _, sub := range s.subs {
		if err := sub.Unsubscribe(); err != nil && first == nil && err != nats.ErrConnectionClosed {
			first = err
		}
	}
	s.once.Do(func() { close(s.ch) })
	return first
}

// subBuffer bounds the messages queued for one subscription's handler; past
// it nats.go drops messages as a slow consumer. Handlers must hand work off
// rather than do it inline, so the queue only has to absorb a burst while
// the handler's goroutine waits for a core. A Go channel allocates its whole
// buffer up front: at 1<<16 pointers that was 512 KiB per agent, 5 GiB of
// the 10,000-agent simulation's memory before any message arrived. The
// aggregator, which receives from every client, subscribes through
// SubscribeBounded with limits sized to the job instead.
const subBuffer = 1 << 12

// Subscribe implements Transport: all subjects feed one channel, drained by
// one goroutine, so the handler sees the connection's arrival order.
func (t *NATSTransport) Subscribe(h Handler, subjects ...string) (Subscription, error) {
	s := &natsSub{ch: make(chan *nats.Msg, subBuffer)}
	for _, subj := range subjects {
		sub, err := t.nc.ChanSubscribe(subj, s.ch)
		if err != nil {
			s.Unsubscribe()
			return nil, fmt.Errorf("bus: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for m := range s.ch {
			t.byKind.add(DirectionReceived, m.Subject, len(m.Data))
			h(Msg{Subject: m.Subject, Reply: m.Reply, Data: m.Data})
		}
	}()
	return s, nil
}

// Request implements Transport.
func (t *NATSTransport) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	data, err := t.sign("request "+subject, data)
	if err != nil {
		return nil, err
	}
	m, err := t.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return nil, fmt.Errorf("bus: request %s: %w", subject, err)
	}
	t.messages.Add(1)
	t.bytes.Add(int64(len(data)))
	t.byKind.add(DirectionSent, subject, len(data))
	t.byKind.add(DirectionReceived, subject, len(m.Data)) // the reply, on the request's channel
	return m.Data, nil
}

// Respond implements Transport.
func (t *NATSTransport) Respond(m Msg, data []byte) error {
	if m.Reply == "" {
		return fmt.Errorf("bus: respond on %s: no reply subject", m.Subject)
	}
	data, err := t.sign("respond on "+m.Subject, data)
	if err != nil {
		return err
	}
	if err := t.nc.Publish(m.Reply, data); err != nil {
		return fmt.Errorf("bus: respond on %s: %w", m.Subject, err)
	}
	t.messages.Add(1)
	t.bytes.Add(int64(len(data)))
	t.byKind.add(DirectionSent, m.Subject, len(data)) // on the request's channel
	return nil
}

// Flush implements Transport.
func (t *NATSTransport) Flush(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	if err := t.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("bus: flush: %w", err)
	}
	return nil
}

// Stats implements Transport.
func (t *NATSTransport) Stats() (int64, int64) { return t.messages.Load(), t.bytes.Load() }

// Traffic is what Stats counts, per message kind (a reply under its
// request's kind): TrafficOf(DirectionSent).
func (t *NATSTransport) Traffic() map[Kind]Traffic { return t.byKind.snapshot(DirectionSent) }

// TrafficOf is what the transport sent or received (direction), per
// message kind.
func (t *NATSTransport) TrafficOf(direction string) map[Kind]Traffic {
	return t.byKind.snapshot(direction)
}

// Close implements Transport.
func (t *NATSTransport) Close() error {
	if t.own {
		t.nc.Close()
	}
	return nil
}
