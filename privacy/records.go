package privacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Each bank's chain is signed and linked, but a chain cut at its tail, or
// a ledger rebuilt from a consistent prefix of every chain, still verifies:
// what is left of it is a valid chain. A reader needs a statement from
// outside the chain of how far it went. The aggregator makes one:
//
//   - every bank reports its ledger head (the seq and digest of its last
//     entry) in its signed update;
//   - the aggregator appends, under its own client id (AggregatorClient),
//     a signed start record before round 1 opens, a round record at the
//     close of every round with the heads reported so far, and a done
//     record with every bank's final head when the job is over;
//   - the round opening, the hello reply and done name the aggregator's
//     latest record, and every entry a bank makes after receiving one
//     carries it as its Anchor: the banks countersign the aggregator's
//     chain, so that the aggregator's records cannot go missing unseen
//     either.
//
// The audit (completeness.go) checks every chain against the heads the
// aggregator recorded and every anchor against the aggregator's chain, and
// says what it could and could not verify. What no record in the ledger
// can show is a ledger whose every chain, the aggregator's included, was
// cut back consistently: for that the audit takes the final heads from
// outside the ledger (the aggregator's report: AuditOptions.ExpectHeads).

// Ref names one entry of a client's chain: its seq and hex Digest.
type Ref struct {
	Seq    uint64 `json:"seq"`
	Digest string `json:"digest"`
}

// Valid reports whether r names an entry: seq from 1 and a hex SHA-256
// digest.
func (r Ref) Valid() bool { return r.Seq >= 1 && validDigest(r.Digest) }

// IsZero reports whether r names nothing (a chain without entries).
func (r Ref) IsZero() bool { return r == Ref{} }

func (r *Ref) String() string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("entry %d (digest %s)", r.Seq, short(r.Digest))
}

// Head is a client's ledger head as the aggregator recorded it: the seq
// and digest of the client's last entry then.
type Head struct {
	Client string `json:"client"`
	Seq    uint64 `json:"seq"`
	Digest string `json:"digest"`
}

// Ref is the entry the head names.
func (h Head) Ref() Ref { return Ref{Seq: h.Seq, Digest: h.Digest} }

// validateRecord checks an aggregator's record: heads and nothing of a
// release. Called by Validate for the record channels.
func (e *Entry) validateRecord(bad func(string, ...any) error) error {
	switch {
	case e.Count != 0 || e.Dim != 0 || e.Sigma != 0 || e.Clip != 0 || e.Rho != 0 || e.NodeIDs != nil || e.Seeded:
		return bad("%s record with release fields (count %d dim %d sigma %v clip %v rho %v)", e.Channel, e.Count, e.Dim, e.Sigma, e.Clip, e.Rho)
	case e.Calibration != nil:
		return bad("calibration on a %s record", e.Channel)
	case e.SecAgg != nil:
		return bad("secagg record on a %s record", e.Channel)
	case e.Anchor != nil:
		return bad("anchor on a %s record: the aggregator's chain is what anchors name", e.Channel)
	}
	return validateHeads(e.Heads, bad)
}

// validateHeads checks a list of heads: valid refs of valid bank ids,
// sorted by client, each client once.
func validateHeads(hs []Head, bad func(string, ...any) error) error {
	for i, h := range hs {
		switch {
		case !validID(h.Client) || h.Client == AggregatorClient:
			return bad("head of client %q: not a bank id", h.Client)
		case !h.Ref().Valid():
			return bad("head of %s: seq %d digest %q is not an entry's seq and hex SHA-256 digest", h.Client, h.Seq, h.Digest)
		case i > 0 && hs[i-1].Client >= h.Client:
			return bad("heads not sorted by client, or %s listed twice", h.Client)
		}
	}
	return nil
}

// SortHeads sorts heads by client, for a record (Validate requires it).
func SortHeads(hs []Head) {
	slices.SortFunc(hs, func(a, b Head) int { return strings.Compare(a.Client, b.Client) })
}

// Head is the gate's chain head: the seq and digest of its client's last
// entry (zero before any). A bank reports it in its update, and the
// aggregator's records repeat it. An entry whose append failed is the
// head: it is charged, it may be stored, and the update that would report
// it is not sent.
func (g *Gate) Head() Ref {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seq == 0 {
		return Ref{}
	}
	return Ref{Seq: g.seq, Digest: g.prev}
}

// SetAnchor makes every later entry of the gate name a, the aggregator's
// latest record its client has received (Entry.Anchor). An anchor older
// than the one held (a lower seq: a delayed or replayed message) is
// ignored, as is an invalid one; the zero Ref changes nothing.
func (g *Gate) SetAnchor(a Ref) {
	if !a.Valid() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.anchor == nil || a.Seq > g.anchor.Seq {
		g.anchor = &a
	}
}

// Anchor is the anchor the gate's next entry carries; nil for none.
func (g *Gate) Anchor() *Ref {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.anchor == nil {
		return nil
	}
	a := *g.anchor
	return &a
}

// RecordRound appends the aggregator's record of round's close (round 0:
// the start record, before round 1 opens) with the ledger heads the banks
// reported, durably, and returns what it appended: the Ref the round
// opening names. The gate must be the aggregator's (Config.Client
// AggregatorClient). A record of the same round already in the chain (an
// earlier life's append, stored after this gate read its chain) is taken
// as this one: its Ref is returned, and nothing is appended again.
func (g *Gate) RecordRound(ctx context.Context, round uint64, heads []Head) (Entry, error) {
	return g.record(ctx, "record round", ChannelRound, round, heads)
}

// RecordDone appends the aggregator's done record: every bank's final
// ledger head, after the job's last round (rounds). As RecordRound, a
// done record already in the chain is returned instead.
func (g *Gate) RecordDone(ctx context.Context, rounds uint64, heads []Head) (Entry, error) {
	return g.record(ctx, "record done", ChannelDone, rounds, heads)
}

func (g *Gate) record(ctx context.Context, op string, ch Channel, round uint64, heads []Head) (Entry, error) {
	hs := slices.Clone(heads)
	SortHeads(hs)
	g.mu.Lock()
	defer g.mu.Unlock()
	e, err := g.appendRecord(ctx, op, func(seq uint64) Entry {
		return Entry{Seq: seq, Job: g.cfg.Job, Client: g.cfg.Client, Channel: ch, Round: round,
			Time: g.clock().UTC(), Heads: slices.Clone(hs)}
	})
	if !errors.Is(err, ErrAlreadyReleased) {
		return e, err
	}
	// settleMoved adopted the stored record of this round: the chain head
	// is that record.
	_, own, rerr := g.readChain(ctx)
	if rerr != nil {
		return Entry{}, wrapErr(op, ErrLedger, "reading back the stored record", rerr)
	}
	for _, s := range own {
		if s.Seq == g.seq {
			return s, nil
		}
	}
	return Entry{}, wrapErr(op, ErrLedger, fmt.Sprintf("the %s record of round %d the ledger holds at seq %d is gone on reading it back", ch, round, g.seq), err)
}

// AggregatorRecords are the aggregator's records of job among a reading's
// accepted entries, in ledger order: with a keyring, only those its key
// signed; records filed by anyone else were rejected by the reader (and
// only the aggregator's client id may carry them: Validate).
func AggregatorRecords(rd Reading, job string) []Entry {
	var out []Entry
	for _, e := range rd.Entries {
		if e.Client == AggregatorClient && e.Channel.record() && (job == "" || e.Job == job) {
			out = append(out, e)
		}
	}
	return out
}

// AggregatorRan reports whether the reading holds a verified record of
// job's aggregator: the job was started by an aggregator that recorded it.
// It is how a prior run of a job should be judged, rather than by the
// ledger's message count: junk any party stores in the ledger is rejected
// by the reader and never makes a record.
func AggregatorRan(rd Reading, job string) bool { return len(AggregatorRecords(rd, job)) > 0 }

// ParseHeads reads the final ledger heads an audit should expect
// (AuditOptions.ExpectHeads) from data: the aggregator's JSON report (a
// "ledger_heads" list at its top level or in its "metrics") or a bare
// JSON list of heads; of a file
// of several lines that is not one JSON document, the last line (where
// --json puts the report). Heads are validated, and sorted by client, the
// aggregator's own included.
func ParseHeads(data []byte) ([]Head, error) {
	const op = "parse heads"
	data = bytes.TrimSpace(data)
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 && !json.Valid(data) {
		// A command's --json output: the report is its last line.
		data = bytes.TrimSpace(data[i+1:])
	}
	var raw json.RawMessage
	if len(data) > 0 && data[0] == '[' {
		raw = data
	} else {
		type section struct {
			Heads json.RawMessage `json:"ledger_heads"`
		}
		var doc struct {
			Heads   json.RawMessage `json:"ledger_heads"`
			Metrics section         `json:"metrics"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, wrapErr(op, ErrInvalid, "not a JSON report or list of heads", err)
		}
		raw = doc.Heads
		if raw == nil {
			raw = doc.Metrics.Heads
		}
		if raw == nil {
			return nil, errorf(op, ErrInvalid, `no "ledger_heads" in the report (an aggregator's JSON report lists them)`)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var hs []Head
	if err := dec.Decode(&hs); err != nil {
		return nil, wrapErr(op, ErrInvalid, "ledger_heads", err)
	}
	if dec.More() {
		return nil, errorf(op, ErrInvalid, "trailing data after the heads")
	}
	SortHeads(hs)
	bad := func(format string, args ...any) error { return errorf(op, ErrInvalid, fmt.Sprintf(format, args...)) }
	for i, h := range hs {
		switch {
		case !validID(h.Client):
			return nil, bad("head of client %q: not a client id", h.Client)
		case !h.Ref().Valid():
			return nil, bad("head of %s: seq %d digest %q is not an entry's seq and hex SHA-256 digest", h.Client, h.Seq, h.Digest)
		case i > 0 && hs[i-1].Client == h.Client:
			return nil, bad("head of %s listed twice", h.Client)
		}
	}
	return hs, nil
}
