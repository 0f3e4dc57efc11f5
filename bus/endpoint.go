package bus

import (
	"context"
	"fmt"
	"time"
)

// Endpoint is one party's end of a job on a transport. It owns what every
// party does the same way: numbering the envelopes it sends (the sequence
// number that makes (from, kind, round, seq) unique and doubles as
// JetStream's Nats-Msg-Id), signing them when the party has a key, and
// opening what it receives through the job's validator. Aggregator and
// agent drivers send and receive only through an Endpoint, so that no
// second copy of this code exists.
//
// An Endpoint is used by its party's driver goroutine; Open and the
// validator's counters are safe for concurrent use.
type Endpoint struct {
	job, id string
	tr      Transport
	signer  *Signer
	val     *Validator
	now     func() time.Time
	seq     uint64
}

// EndpointConfig configures an Endpoint.
type EndpointConfig struct {
	Job string
	ID  string // the party's id: a client id or AggregatorID
	// Signer, when set, signs every envelope sent; it must sign as ID, and
	// when Schema.Keyring is set, with the key the keyring lists for ID.
	Signer *Signer
	// Schema is what received messages are checked against; its Job is set
	// from Job.
	Schema Schema
	Now    func() time.Time // default time.Now
	// FirstSeq is the sequence number the first envelope sent gets minus
	// one: a restarted party continues its numbering (for example from the
	// wall clock), so that its new envelopes are not taken for duplicates
	// of its earlier life's by JetStream's de-duplication window.
	FirstSeq uint64
}

// NewEndpoint returns the party's endpoint on tr.
func NewEndpoint(cfg EndpointConfig, tr Transport) (*Endpoint, error) {
	if !ValidID(cfg.Job) {
		return nil, fmt.Errorf("bus: endpoint: job id %q is not [a-z0-9-]{1,64}", cfg.Job)
	}
	if cfg.ID != AggregatorID && !ValidID(cfg.ID) {
		return nil, fmt.Errorf("bus: endpoint: party id %q is not [a-z0-9-]{1,64}", cfg.ID)
	}
	if cfg.Signer != nil {
		if cfg.Signer.ID() != cfg.ID {
			return nil, fmt.Errorf("bus: endpoint %s: the signer signs as %s", cfg.ID, cfg.Signer.ID())
		}
		if k := cfg.Schema.Keyring; k != nil {
			if p, ok := k.Party(cfg.ID); !ok || p.PublicKey != cfg.Signer.PublicKey() {
				return nil, fmt.Errorf("bus: endpoint %s: the keyring does not list the signer's key %s", cfg.ID, cfg.Signer.PublicKey())
			}
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Schema.Job = cfg.Job
	if sa := cfg.Schema.SecAgg; sa != nil && sa.Self == "" {
		c := *sa
		c.Self = cfg.ID // the shares it accepts are those addressed to it
		cfg.Schema.SecAgg = &c
	}
	return &Endpoint{job: cfg.Job, id: cfg.ID, tr: tr, signer: cfg.Signer, val: NewValidator(cfg.Schema), now: cfg.Now, seq: cfg.FirstSeq}, nil
}

// Job is the endpoint's job id.
func (e *Endpoint) Job() string { return e.job }

// ID is the party's id.
func (e *Endpoint) ID() string { return e.id }

// Transport is the transport the endpoint sends on.
func (e *Endpoint) Transport() Transport { return e.tr }

// Validator checks received messages and counts rejects.
func (e *Endpoint) Validator() *Validator { return e.val }

// Keyring is the keyring received envelopes are verified against (nil:
// none).
func (e *Endpoint) Keyring() *Keyring { return e.val.schema.Keyring }

// Seal numbers, stamps and (with a signer) signs an envelope of kind for
// round around body.
func (e *Endpoint) Seal(kind Kind, round uint64, body any) ([]byte, error) {
	env, err := e.envelope(kind, round, body)
	if err != nil {
		return nil, err
	}
	return e.seal(env)
}

// envelope numbers and stamps an envelope of kind for round and encodes
// body into it.
func (e *Endpoint) envelope(kind Kind, round uint64, body any) (Envelope, error) {
	e.seq++
	env := Envelope{Version: SchemaVersion, Job: e.job, Kind: kind, From: e.id, Round: round, Seq: e.seq, Time: e.now().UnixNano()}
	frame, b, err := marshalBody(body)
	if err != nil {
		return Envelope{}, fmt.Errorf("bus: seal %s body: %w", kind, err)
	}
	env.Body, env.frame = b, frame
	return env, nil
}

// seal signs env (with a signer) and encodes it.
func (e *Endpoint) seal(env Envelope) ([]byte, error) {
	if e.signer != nil {
		return e.signer.sealEnvelope(env)
	}
	return env.encode(), nil
}

// carriage is how the transport carries large bodies (Carrier).
func (e *Endpoint) carriage() Carriage {
	if c, ok := e.tr.(Carrier); ok {
		return c.Carriage()
	}
	return Carriage{}
}

// Publish seals body and publishes it on subject. An update or model whose
// sealed envelope is over the transport's inline limit goes by reference:
// its body is stored in the party's blob bucket, and the envelope, signed
// as usual, carries the reference. Anything over the server's payload
// limit that cannot go so is refused here, with the limit named, rather
// than by the connection.
func (e *Endpoint) Publish(ctx context.Context, subject string, kind Kind, round uint64, body any) error {
	env, err := e.envelope(kind, round, body)
	if err != nil {
		return fmt.Errorf("bus: %s publish %s: %w", e.id, kind, err)
	}
	data, err := e.seal(env)
	if err != nil {
		return fmt.Errorf("bus: %s publish %s: %w", e.id, kind, err)
	}
	c := e.carriage()
	byRef := ByReference(kind) && !addressedToOne(kind, subject)
	switch {
	case c.Inline > 0 && len(data) > c.Inline && c.Blobs != nil && byRef:
		ref, err := c.Blobs.Put(ctx, round, blobObjectName(&env), env.Body)
		if err != nil {
			return fmt.Errorf("bus: %s publish %s: %d bytes over the inline limit of %d (server payload limit %d) go by reference, and storing them failed: %w",
				e.id, kind, len(data), c.Inline, c.MaxPayload, err)
		}
		if env.Ref, err = ref.Encode(); err != nil {
			return fmt.Errorf("bus: %s publish %s: %w", e.id, kind, err)
		}
		env.Body = nil
		if data, err = e.seal(env); err != nil {
			return fmt.Errorf("bus: %s publish %s: %w", e.id, kind, err)
		}
	case c.MaxPayload > 0 && len(data) > c.MaxPayload:
		why := "no object store is configured (JetStream off)"
		switch {
		case !ByReference(kind):
			why = "only updates and models travel by reference"
		case !byRef:
			why = "a model addressed to one party travels inline only (the sender's blob bucket is read by every bank)"
		}
		return fmt.Errorf("bus: %s publish %s: %d bytes over the server's payload limit (max_payload) of %d bytes, and %s",
			e.id, kind, len(data), c.MaxPayload, why)
	}
	return e.tr.Publish(ctx, subject, data)
}

// addressedToOne reports whether a message of kind on subject is a
// personalised model (gf.<job>.model.<client>). It never goes by
// reference: the aggregator's blob bucket is read by every bank, for the
// global model, and a personalised model stored there would be read by
// all of them. The payload limit `graphfed keys` sets holds a model.
func addressedToOne(kind Kind, subject string) bool {
	if kind != KindModel {
		return false
	}
	p, err := ParseSubject(subject)
	return err != nil || p.From != "all"
}

// Request seals body and sends it as a request on subject (a hello).
func (e *Endpoint) Request(ctx context.Context, subject string, kind Kind, body any) ([]byte, error) {
	data, err := e.Seal(kind, 0, body)
	if err != nil {
		return nil, fmt.Errorf("bus: %s request %s: %w", e.id, kind, err)
	}
	return e.tr.Request(ctx, subject, data)
}

// Respond seals body and answers request m. Secure-aggregation messages
// are never answered: their reply subjects are their sender's to choose,
// and an answer would be a message of this party on a subject of the
// sender's choosing.
func (e *Endpoint) Respond(m Msg, kind Kind, body any) error {
	if ps, err := ParseSubject(m.Subject); IsSecAgg(kind) || err == nil && IsSecAgg(ps.Kind) {
		return fmt.Errorf("bus: %s respond %s to %s: secure-aggregation messages are never answered", e.id, kind, m.Subject)
	}
	data, err := e.Seal(kind, 0, body)
	if err != nil {
		return fmt.Errorf("bus: %s respond %s: %w", e.id, kind, err)
	}
	return e.tr.Respond(m, data)
}

// Open validates a received message and decodes its body
// (Validator.OpenWith), fetching a body sent by reference from the object
// store of the transport's carriage.
func (e *Endpoint) Open(m Msg) (Envelope, any, error) {
	var fetch Fetch
	if b := e.carriage().Blobs; b != nil {
		fetch = func(ref BlobRef) ([]byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultJSTimeout)
			defer cancel()
			return b.Fetch(ctx, ref)
		}
	}
	return e.val.openPre(m.Subject, m.Data, fetch, m.Pre)
}

// OpenFrom decodes a message that arrives outside the validator's
// subjects (a reply on the party's inbox): it must be of job and kind,
// sent by from and, with a keyring, signed by from.
func (e *Endpoint) OpenFrom(data []byte, kind Kind, from string, dst any) (Envelope, error) {
	env, err := Open(data)
	if err != nil {
		return Envelope{}, err
	}
	if env.Job != e.job || env.Kind != kind || env.From != from {
		return Envelope{}, &RejectError{Reason: ReasonSubject,
			Err: fmt.Errorf("a %s of job %q from %q, want a %s of job %s from %s", env.Kind, env.Job, env.From, kind, e.job, from)}
	}
	if k := e.Keyring(); k != nil {
		if err := k.Verify(&env); err != nil {
			return Envelope{}, &RejectError{Reason: ReasonSignature, Err: err}
		}
	}
	if dst != nil {
		if err := env.UnmarshalBody(dst); err != nil {
			return Envelope{}, err
		}
	}
	return env, nil
}
