package bus

import "strings"

// Directions of a message on a transport: the traffic observer's labels.
const (
	DirectionSent     = "sent"
	DirectionReceived = "received"
)

// TrafficObserver sees every message a NATSTransport publishes, requests,
// responds with or hands to its subscribers, with its size in bytes as it
// crossed the wire (signed). Metrics (the telemetry package) count traffic
// by channel and direction through it; the transport's own Stats stay the
// figures of the JSON report, and the sent bytes observed add up to them.
// It is called on the sending or delivering goroutine: it must be cheap
// and safe for concurrent use.
type TrafficObserver interface {
	Traffic(direction, subject string, bytes int)
}

// trafficBox holds the observer (atomic.Pointer needs a concrete type).
type trafficBox struct{ o TrafficObserver }

// SetTraffic installs o as the transport's traffic observer; nil removes
// it.
func (t *NATSTransport) SetTraffic(o TrafficObserver) { t.traffic.Store(&trafficBox{o}) }

// observe reports one message to the observer, if any.
func (t *NATSTransport) observe(direction, subject string, n int) {
	if b := t.traffic.Load(); b != nil && b.o != nil {
		b.o.Traffic(direction, subject, n)
	}
}

// Channels of traffic that is not a job's message kind.
const (
	ChannelJetStream = "jetstream" // $JS API calls, acknowledgements and stream traffic
	ChannelInbox     = "inbox"     // replies on a party's inbox
	ChannelOther     = "other"
)

// ChannelOf names the channel of a subject for metrics: the kind token of
// a job subject (gf.<job>.<kind>...; hello, round, update, model, emb,
// metrics, bye, done), or jetstream, inbox or other. The set is closed, so
// that a label built from it stays of low cardinality whatever subject a
// peer publishes on.
func ChannelOf(subject string) string {
	switch {
	case strings.HasPrefix(subject, "$JS.") || strings.HasPrefix(subject, "$KV.") || strings.HasPrefix(subject, "$O."):
		return ChannelJetStream
	case strings.HasPrefix(subject, "_INBOX."):
		return ChannelInbox
	case !strings.HasPrefix(subject, "gf."):
		return ChannelOther
	}
	rest := subject[len("gf."):]
	i := strings.IndexByte(rest, '.')
	if i < 0 {
		return ChannelOther
	}
	kind := rest[i+1:]
	if j := strings.IndexByte(kind, '.'); j >= 0 {
		kind = kind[:j]
	}
	switch k := Kind(kind); k {
	case KindHello, KindRound, KindUpdate, KindModel, KindEmb, KindMetrics, KindBye, KindDone:
		return kind
	}
	return ChannelOther
}
