package bus

import (
	"fmt"
)

// A job's size limits come from its model schema: the largest message any
// of its parties legitimately sends bounds the server's payload limit
// (max_payload), and that limit in turn bounds what a party queues. A
// payload limit far above the job's messages only lets one bank push
// larger floods at the aggregator (issue 14: 30 messages of 60 MiB cut the
// aggregator off).

const (
	// MinMaxPayload is the smallest payload limit graphfed configures:
	// room for hellos, metrics, ledger entries and the JetStream API
	// whatever the model.
	MinMaxPayload = 1 << 20
	// envelopeOverhead bounds an envelope's fields besides its vectors
	// (ids, round, seq, time, signature, msgpack headers, scalars).
	envelopeOverhead = 64 << 10
	// idBytes bounds one node id of an embedding message (msgpack int64).
	idBytes = 9
)

// JobSize is what a job's learners send at most, as its model schema
// defines it. `graphfed keys` takes it from --max-params, --max-emb-rows
// and --emb-dim.
type JobSize struct {
	// Params is the parameter count of the job's model (the largest one for
	// a job with several). An update and a model message carry the
	// parameters and, under CE-FedGNN, a gradient estimator of the same
	// size: 2 float32 vectors of Params values.
	Params int
	// EmbRows is the most boundary rows one embedding message carries (a
	// bank's boundary accounts towards one neighbour); 0: the job exchanges
	// no embeddings.
	EmbRows int
	// EmbDim is the values per embedding row.
	EmbDim int
	// KernelValues is the float32 values of a strategy payload in a round
	// opening (LPSFed's reference kernel); 0: none.
	KernelValues int
}

// DefaultJobSize is the sizing of `graphfed keys` without flags: a model
// of up to 1,048,576 parameters (8 MiB per update) and embedding messages
// of up to 65,536 rows of 64 values (the AML CE-FedGNN learners' default
// dimension), so a 21 MiB payload limit.
func DefaultJobSize() JobSize {
	return JobSize{Params: 1 << 20, EmbRows: 1 << 16, EmbDim: 64}
}

// LargestMessage is the size in bytes of the largest legitimate message
// of a job of size s: an update or model, an embedding message (values
// and node ids), or a round opening with its kernel, plus the envelope.
func (s JobSize) LargestMessage() int {
	model := 2 * 4 * s.Params
	emb := s.EmbRows * (4*s.EmbDim + idBytes)
	kernel := 4 * s.KernelValues
	return max(model, emb, kernel) + envelopeOverhead
}

// PayloadLimit is the server payload limit that fits s: its largest
// message with a quarter of headroom, rounded up to a whole MiB, at least
// MinMaxPayload. A job whose messages would not fit DefaultMaxPayload
// (nats-server's ceiling) is refused: its models must travel through the
// object store by reference instead.
func (s JobSize) PayloadLimit() (int, error) {
	if s.Params < 0 || s.EmbRows < 0 || s.EmbDim < 0 || s.KernelValues < 0 || (s.EmbRows > 0) != (s.EmbDim > 0) {
		return 0, fmt.Errorf("bus: job size %+v: counts must not be negative, and embedding rows and dimension go together", s)
	}
	const mib = 1 << 20
	// Guard the arithmetic: anything near the ceiling is refused anyway.
	if s.Params > DefaultMaxPayload || s.EmbRows > DefaultMaxPayload || s.EmbDim > DefaultMaxPayload ||
		s.KernelValues > DefaultMaxPayload || s.EmbRows > 0 && s.EmbDim > DefaultMaxPayload/s.EmbRows {
		return 0, fmt.Errorf("bus: job size %+v: messages over the %d MiB payload ceiling", s, DefaultMaxPayload/mib)
	}
	need := s.LargestMessage()
	limit := (need + need/4 + mib - 1) / mib * mib
	if limit > DefaultMaxPayload {
		return 0, fmt.Errorf("bus: job size %+v: its largest message (%d bytes) with headroom needs %d MiB, over the %d MiB payload ceiling",
			s, need, limit/mib, DefaultMaxPayload/mib)
	}
	return max(limit, MinMaxPayload), nil
}

// MaxPendingFor is the server's per-connection outbound limit (max_pending)
// for a payload limit and a job of parties parties: one full message from
// every party twice over, and never below 64 MiB. The server cuts a client
// off as a slow consumer when this much waits for it, so it must hold a
// round of legitimate traffic to the aggregator with room to spare.
func MaxPendingFor(maxPayload, parties int) int64 {
	return max(int64(DefaultMaxPayload), 2*int64(max(parties, 1))*int64(maxPayload))
}

// PendingLimits bound what the client library queues for one subscription
// before it drops messages as a slow consumer (nats.go
// Subscription.SetPendingLimits).
type PendingLimits struct {
	Msgs  int
	Bytes int
}

// AggregatorPending are the aggregator's subscription pending limits for a
// payload limit and a job of clients clients: above one round of
// legitimate traffic (a hello, an update, metrics and a bye from every
// client, each at most maxPayload) several times over. The aggregator
// hands every message at once to its own bounded queue, so these are a
// backstop, not the flow control.
func AggregatorPending(maxPayload, clients int) PendingLimits {
	clients = max(clients, 1)
	return PendingLimits{Msgs: max(1<<16, 64*clients), Bytes: max(4*DefaultMaxPayload, 4*(clients+1)*maxPayload)}
}
