package bus

// Outgoing is one envelope a party's core asks to send, before it is
// sealed: what aggregator and agent actions turn into (their Outbound
// functions), so that the NATS drivers and the deterministic simulator
// send the same messages through an Endpoint.
type Outgoing struct {
	Subject string
	Kind    Kind
	Round   uint64
	Body    any
	// Request marks a hello: it is sent as a request and the aggregator's
	// answer comes back on the sender's inbox.
	Request bool
	// ReplyTo, when set, makes the message the answer to that client's
	// pending hello request (Endpoint.Respond) rather than a publication.
	ReplyTo string
}
