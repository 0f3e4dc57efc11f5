package privacy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// A ledger must survive its own writers: any party that may append to it
// (and a JetStream ledger is appended to by every bank, each on its own
// subject) could store garbage, a forged entry, or a copy of an old entry.
// Nothing a reader finds may stop it. So readers never trust a stored
// record: each is decoded strictly, checked against the party it is filed
// under, verified against the party's key when a keyring is known, and
// chained by hash to the party's previous entry. What fails is skipped,
// counted and reported (Rejection); what passes is the party's chain, and
// that chain alone rebuilds a gate's budget and feeds the audit.
//
// The chain: every entry carries Prev, the hex SHA-256 Digest of its
// client's previous entry ("" for seq 1), and Sig, its client's ed25519
// signature over its own Digest (which covers Prev). Rewriting an entry
// changes its Digest and breaks the link from its successor; removing one
// leaves a gap in the sequence numbers and a link to nothing; reordering
// does both.

// entryDomain separates ledger entry signatures from envelope signatures
// and the NATS login nonce, which the same key signs.
const entryDomain = "graphfed ledger entry v1\x00"

// EntrySigner signs ledger entries as one party (bus.Signer with the
// party's NKey).
type EntrySigner interface {
	SignEntry(digest []byte) ([]byte, error)
}

// KeyVerifier checks that sig is client's signature over digest in job
// (bus.Keyring with the job's public keys).
type KeyVerifier interface {
	VerifyEntry(job, client string, digest, sig []byte) error
}

// Digest is what an entry's signature covers and what its successor's
// Prev names: SHA-256 over a domain string and the entry's JSON encoding
// without Sig. encoding/json is deterministic for a struct, and decoding
// and re-encoding a valid entry gives the same bytes (FuzzEntryDecode), so
// a reader recomputes the writer's digest from the decoded entry.
func (e *Entry) Digest() ([sha256.Size]byte, error) {
	c := *e
	c.Sig = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return [sha256.Size]byte{}, wrapErr("digest", ErrInvalid, fmt.Sprintf("seq %d", e.Seq), err)
	}
	h := sha256.New()
	h.Write([]byte(entryDomain))
	h.Write(b)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d, nil
}

// EncodeEntry is the stored form of an entry: one JSON object, no newline.
func EncodeEntry(e Entry) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, wrapErr("encode entry", ErrInvalid, fmt.Sprintf("seq %d", e.Seq), err)
	}
	return b, nil
}

// DecodeEntry decodes one stored entry strictly (one JSON object, known
// fields only, nothing after it) and validates it.
func DecodeEntry(data []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Entry{}, wrapErr("decode entry", ErrInvalid, "", err)
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) != 0 {
		return Entry{}, errorf("decode entry", ErrInvalid, "trailing data after the entry")
	}
	if err := e.Validate(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// LinkEntries returns a copy of entries with every Prev set to the digest
// of the same client's previous entry in the slice, and Sig cleared: the
// chain a gate would have written. For tests, scenarios and fixtures.
func LinkEntries(entries []Entry) ([]Entry, error) {
	heads := map[ClientKey]string{}
	out := make([]Entry, len(entries))
	for i, e := range entries {
		e = e.clone()
		k := ClientKey{e.Job, e.Client}
		e.Prev, e.Sig = heads[k], nil
		d, err := e.Digest()
		if err != nil {
			return nil, err
		}
		heads[k] = hex.EncodeToString(d[:])
		out[i] = e
	}
	return out, nil
}

// Record is one stored ledger record as read back, before it is trusted.
type Record struct {
	Pos   uint64 // its place in storage: stream sequence, line number, or index, from 1
	Where string // for the report: "subject gf.job.ledger.bank-0", "line 7"
	// Job and Client name the party the storage files it under (a
	// JetStream subject names one); both empty when storage does not.
	Job, Client string
	Data        []byte
	// At is when storage took the record (a JetStream message's
	// timestamp), zero when it does not say: for throughput figures only,
	// never for judging the record.
	At time.Time
}

// RejectReason says why a record was skipped.
type RejectReason string

// Reasons a record is rejected.
const (
	RejectMalformed  RejectReason = "malformed"    // not a decodable, valid entry
	RejectMisfiled   RejectReason = "misfiled"     // stored under another party's subject or job
	RejectUnsigned   RejectReason = "unsigned"     // no signature, and a keyring is configured
	RejectForged     RejectReason = "forged"       // the signature does not verify with its client's key
	RejectOutOfChain RejectReason = "out-of-chain" // seq not above its client's chain head: replayed, rewritten or reordered
)

// Rejection is a record skipped by a reader, with where it is stored.
type Rejection struct {
	Pos    uint64       `json:"pos"`
	Where  string       `json:"where"`
	Job    string       `json:"job,omitempty"`    // the entry's or the filing's job, when known
	Client string       `json:"client,omitempty"` // the entry's or the filing's client, when known
	Seq    uint64       `json:"seq,omitempty"`    // the entry's seq, when it decoded
	Reason RejectReason `json:"reason"`
	Detail string       `json:"detail"`
}

func (r Rejection) String() string {
	who := r.Client
	if who == "" {
		who = "?"
	}
	return fmt.Sprintf("pos %d (%s): %s entry of client %s seq %d: %s", r.Pos, r.Where, r.Reason, who, r.Seq, r.Detail)
}

// BreakKind says how an accepted entry fails to continue its client's
// chain.
type BreakKind string

// Kinds of chain breaks.
const (
	// BreakGap: sequence numbers skipped; the entries between are missing
	// (removed, or never stored).
	BreakGap BreakKind = "gap"
	// BreakLink: the entry's Prev is not the digest of its client's
	// previous entry: that entry was rewritten, or entries were reordered.
	BreakLink BreakKind = "link"
)

// ChainBreak is an entry that is counted but does not link to its
// client's previous entry. It is counted rather than skipped because
// skipping every entry after a break would understate a budget, which is
// the unsafe side; the audit flags the client's claim instead.
type ChainBreak struct {
	Pos    uint64    `json:"pos"`
	Where  string    `json:"where"`
	Job    string    `json:"job"`
	Client string    `json:"client"`
	Seq    uint64    `json:"seq"`
	After  uint64    `json:"after"` // seq of the client's previous accepted entry (0: none)
	Kind   BreakKind `json:"kind"`
	Detail string    `json:"detail"`
}

func (b ChainBreak) String() string {
	return fmt.Sprintf("pos %d (%s): chain %s in client %s/%s at seq %d after seq %d: %s",
		b.Pos, b.Where, b.Kind, b.Job, b.Client, b.Seq, b.After, b.Detail)
}

// chainHead is the last accepted entry of one client.
type chainHead struct {
	seq    uint64
	digest string // hex
}
