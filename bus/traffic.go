package bus

import "strings"

// Directions of a message on a transport, as NATSTransport.TrafficOf counts
// them (and the metrics label them).
const (
	DirectionSent     = "sent"
	DirectionReceived = "received"
)

// Channels of traffic that is not a job's message kind.
const (
	ChannelJetStream = "jetstream" // $JS API calls, acknowledgements and stream traffic
	ChannelInbox     = "inbox"     // replies on a party's inbox
	ChannelOther     = "other"
)

// ChannelOf names the channel of a subject for metrics: the kind token of
// a job subject (gf.<job>.<kind>...; hello, round, update, model, emb,
// metrics, bye, done, and secure aggregation's sa.adv, sa.keys, sa.share,
// sa.masked, sa.list, sa.reveal), or jetstream, inbox or other. The set is closed, so
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
		if kind[:j] == secAggNamespace {
			// gf.<job>.sa.<kind>...: the channel is the two tokens.
			if k := strings.IndexByte(kind[j+1:], '.'); k >= 0 {
				kind = kind[:j+1+k]
			}
		} else {
			kind = kind[:j]
		}
	}
	switch k := Kind(kind); k {
	case KindHello, KindRound, KindUpdate, KindModel, KindEmb, KindMetrics, KindBye, KindDone:
		return kind
	}
	if IsSecAgg(Kind(kind)) {
		return kind
	}
	return ChannelOther
}
