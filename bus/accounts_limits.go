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

// LedgerLimits bound one party's ledger stream in the accounts layout,
// with discard-new: a stream at its limit refuses the next record, which
// fails at the party that sent it, and no other party's stream, nor the
// ledger account's store as a whole, fills with it. Before, the account's
// store was the only bound and a bank flooding its own ledger subject
// could spend it for everyone. One record is bounded by the payload limit
// already (the ledger's import carries the sender's payload at most).
type LedgerLimits struct {
	Msgs  int64 // records, entries and junk alike
	Bytes int64 // stored bytes
}

const (
	// ledgerPartyMsgs is far above any job's honest entries: a bank makes
	// one to four per round (model, embeddings, calibration), so this is
	// 4,096 rounds of all four.
	ledgerPartyMsgs = 1 << 14
	// ledgerPartyBytes is far above any job's honest entries too (a 5M-row
	// AML job writes a few MB a bank). A stream's byte limit is reserved
	// against the account's and the server's store when the stream is
	// made, so it is kept modest: a job of 100 banks reserves 25 GiB.
	ledgerPartyBytes int64 = 256 << 20
	// ledgerRecordBytesPerBank is the aggregator's extra room: each of its
	// round records names every bank's ledger head (about 100 bytes a
	// bank), 1,000 rounds of them with room to spare.
	ledgerRecordBytesPerBank int64 = 128 << 10
)

// LedgerPartyLimits are the limits of party's ledger stream in a job of
// banks banks.
func LedgerPartyLimits(party string, banks int) LedgerLimits {
	l := LedgerLimits{Msgs: ledgerPartyMsgs, Bytes: ledgerPartyBytes}
	if party == AggregatorID {
		l.Bytes += int64(max(banks, 0)) * ledgerRecordBytesPerBank
	}
	return l
}

// ledgerAccountBytes is the sum of every party's stream limit: the ledger
// account's store.
func ledgerAccountBytes(banks int) int64 {
	return int64(banks)*LedgerPartyLimits("", banks).Bytes + LedgerPartyLimits(AggregatorID, banks).Bytes
}

// limitsFor are the default limits of an account of the job: the job's
// payload limit, and JetStream storage sized from it and the number of
// banks.
func limitsFor(a *Account, payload, banks int) AccountLimits {
	l := AccountLimits{MaxConnections: partyConnections, MaxSubscriptions: partySubscriptions, MaxPayload: payload}
	switch {
	case a.Name == LedgerAccount:
		l.MaxStore = ledgerAccountBytes(banks)
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
// its block, its store for streams of up to replicas replicas.
func writeLimits(b *bytes.Buffer, a Account, replicas int) {
	l := a.Limits
	fmt.Fprintf(b, "    limits: { max_connections: %d, max_subscriptions: %d, max_payload: %d }\n",
		l.MaxConnections, l.MaxSubscriptions, l.MaxPayload)
	if a.JetStream {
		fmt.Fprintf(b, "    jetstream: { max_memory: %d, max_file: %d, max_streams: %d, max_consumers: %d }\n",
			l.MaxMemory, l.MaxStore*int64(max(replicas, 1)), l.MaxStreams, l.MaxConsumers)
	}
}
