package bus

import (
	"bytes"
	"fmt"
)

// AccountLimits bound what one account may hold on the server, so that a
// party that floods connections, subscriptions or its own JetStream
// storage exhausts its own allowance and nobody else's. nats-server
// refuses what goes beyond (a connection, a subscription, a stream, a
// message) and logs it, which bus.Server counts as a "limit" event.
// Zero fields are not rendered (the server's default: unlimited).
type AccountLimits struct {
	MaxConnections   int
	MaxSubscriptions int
	MaxPayload       int
	// JetStream, for an account that has it.
	MaxMemory    int64
	MaxStore     int64
	MaxStreams   int
	MaxConsumers int
}

// Per-party allowances of a job's accounts. A party runs one connection
// (and a tool or two: an audit, a restart overlapping its killed life);
// its subscriptions are a handful of subjects and its inboxes.
const (
	partyConnections   = 8
	partySubscriptions = 1024
)

// BlobBucketBytes is the most a party's blob bucket holds for a job whose
// payload limit is payload: DefaultBlobKeepRounds rounds of bodies by
// reference, each within the job's model size (which the payload limit
// holds with headroom), several to a round for the aggregator's models.
// A full bucket refuses the next body, which fails at its sender, rather
// than growing without bound.
func BlobBucketBytes(payload int) int64 { return int64(8*DefaultBlobKeepRounds) * int64(payload) }

// ledgerPartyBytes is the ledger account's store per party, far above any
// job's honest entries (a 5M-row AML job writes a few MB a bank). It bounds
// the account as a whole: a per-stream byte limit would be reserved
// against the server's store at creation, and a job of many banks would
// not fit a small disk.
const ledgerPartyBytes int64 = 1 << 30

// limitsFor are the default limits of an account of the job: the job's
// payload limit, and JetStream storage sized from it and the number of
// banks.
func limitsFor(a *Account, payload, banks int) AccountLimits {
	l := AccountLimits{MaxConnections: partyConnections, MaxSubscriptions: partySubscriptions, MaxPayload: payload}
	switch {
	case a.Name == LedgerAccount:
		l.MaxStore = int64(banks+1) * ledgerPartyBytes
		l.MaxMemory = 64 << 20
		l.MaxStreams, l.MaxConsumers = banks+1+4, 16
	case a.Name == AggregatorAccount:
		// Its update stream (a round of every bank's updates, and the
		// log since the last checkpoint), checkpoint, model store and
		// blob bucket.
		l.MaxSubscriptions += 16 * banks
		l.MaxStore = int64(4*(banks+1))*int64(payload) + BlobBucketBytes(payload) + 1<<30
		l.MaxMemory = 256 << 20
		l.MaxStreams, l.MaxConsumers = 8, 64
	case a.JetStream:
		// A bank: its blob bucket, with room for a stream or two of its
		// own making (which hold only what reaches its account).
		l.MaxStore = BlobBucketBytes(payload) + 256<<20
		l.MaxMemory = 64 << 20
		l.MaxStreams, l.MaxConsumers = 4, 16
	}
	return l
}

// writeLimits renders an account's limits and JetStream allowance inside
// its block.
func writeLimits(b *bytes.Buffer, a Account) {
	l := a.Limits
	fmt.Fprintf(b, "    limits: { max_connections: %d, max_subscriptions: %d, max_payload: %d }\n",
		l.MaxConnections, l.MaxSubscriptions, l.MaxPayload)
	if a.JetStream {
		fmt.Fprintf(b, "    jetstream: { max_memory: %d, max_file: %d, max_streams: %d, max_consumers: %d }\n",
			l.MaxMemory, l.MaxStore, l.MaxStreams, l.MaxConsumers)
	}
}
