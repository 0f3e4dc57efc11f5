// Package ledgertest is a conformance suite for implementations of
// privacy.Ledger: run it against a new ledger (the bus package's JetStream
// ledger, say) to check the promises the gate and the audit rely on.
package ledgertest

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
)

// Run checks a Ledger implementation. open must return a new, empty ledger
// each time it is called.
func Run(t *testing.T, open func(t *testing.T) privacy.Ledger) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, open(t)) })
	t.Run("RejectsInvalid", func(t *testing.T) { rejectsInvalid(t, open(t)) })
	t.Run("RejectsOutOfOrder", func(t *testing.T) { rejectsOutOfOrder(t, open(t)) })
	t.Run("NoAliasing", func(t *testing.T) { noAliasing(t, open(t)) })
	t.Run("CancelledContext", func(t *testing.T) { cancelled(t, open(t)) })
	t.Run("ChainAndSignature", func(t *testing.T) { chainAndSignature(t, open(t)) })
	t.Run("Records", func(t *testing.T) { records(t, open(t)) })
	t.Run("RejectsBadRecords", func(t *testing.T) { rejectsBadRecords(t, open(t)) })
	t.Run("SecAgg", func(t *testing.T) { secAgg(t, open(t)) })
	t.Run("RejectsBadSecAgg", func(t *testing.T) { rejectsBadSecAgg(t, open(t)) })
}

// read returns the entries of l as a reader sees them, failing the test if
// the reader skipped or flagged anything.
func read(t *testing.T, l privacy.Ledger) []privacy.Entry {
	t.Helper()
	rd, err := privacy.ReadLedger(context.Background(), l, privacy.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Rejected) != 0 || len(rd.Breaks) != 0 {
		t.Fatalf("a clean ledger read with rejects %v and breaks %v", rd.Rejected, rd.Breaks)
	}
	return rd.Entries
}

// Entries returns a few valid entries of every kind, in ledger order,
// hash-chained per client as a gate writes them.
func Entries() []privacy.Entry {
	es, err := privacy.LinkEntries(unlinked())
	if err != nil {
		panic(err)
	}
	return es
}

func unlinked() []privacy.Entry {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return []privacy.Entry{
		{Seq: 1, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelModel, Round: 1, Count: 1, Dim: 8,
			Sigma: 1e-3, Clip: 15, Rho: 30, Time: at},
		{Seq: 2, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelEmb, Round: 1, NodeIDs: []int64{4, 9, -2},
			Count: 3, Dim: 64, Sigma: 0.5, Clip: 1, Time: at.Add(time.Second)},
		{Seq: 1, Job: "job-1", Client: "bank-10", Channel: privacy.ChannelGrad, Round: 1, Count: 4, Dim: 2,
			Sigma: 2, Clip: 1, Rho: 4, Time: at.Add(2 * time.Second), Seeded: true},
		{Seq: 3, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelCalibration, Round: 2, Time: at.Add(3 * time.Second),
			Calibration: &privacy.Calibration{K: 50, N: 1000, Sampled: 0, Q: []float64{50, 100}, Rho: []float64{0.05, 0.9}}},
		{Seq: 2, Job: "job-1", Client: "bank-10", Channel: privacy.ChannelDescriptor, Round: 1, Count: 84, Dim: 1433,
			Sigma: 0.5, Clip: 1, Rho: privacy.Sensitivity(privacy.ChannelDescriptor, 1, 84), Time: at.Add(4 * time.Second)},
	}
}

// Equal reports whether two entries have the same content.
func Equal(a, b privacy.Entry) bool {
	if a.Seq != b.Seq || a.Job != b.Job || a.Client != b.Client || a.Channel != b.Channel || a.Round != b.Round ||
		a.Count != b.Count || a.Dim != b.Dim || a.Sigma != b.Sigma || a.Clip != b.Clip || a.Rho != b.Rho ||
		!a.Time.Equal(b.Time) || a.Seeded != b.Seeded || len(a.NodeIDs) != len(b.NodeIDs) ||
		a.Prev != b.Prev || string(a.Sig) != string(b.Sig) ||
		(a.Calibration == nil) != (b.Calibration == nil) || (a.Anchor == nil) != (b.Anchor == nil) ||
		(a.SecAgg == nil) != (b.SecAgg == nil) || a.SecAgg != nil && !equalSecAgg(*a.SecAgg, *b.SecAgg) ||
		a.Anchor != nil && *a.Anchor != *b.Anchor || len(a.Heads) != len(b.Heads) {
		return false
	}
	for i := range a.Heads {
		if a.Heads[i] != b.Heads[i] {
			return false
		}
	}
	for i := range a.NodeIDs {
		if a.NodeIDs[i] != b.NodeIDs[i] {
			return false
		}
	}
	if a.Calibration != nil {
		ca, cb := a.Calibration, b.Calibration
		if ca.K != cb.K || ca.N != cb.N || ca.Sampled != cb.Sampled || len(ca.Q) != len(cb.Q) || len(ca.Rho) != len(cb.Rho) {
			return false
		}
		for i := range ca.Q {
			if ca.Q[i] != cb.Q[i] || ca.Rho[i] != cb.Rho[i] {
				return false
			}
		}
	}
	return true
}

func roundTrip(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	if es := read(t, l); len(es) != 0 {
		t.Fatalf("new ledger: %d entries", len(es))
	}
	want := Entries()
	for _, e := range want {
		if err := l.Append(ctx, e); err != nil {
			t.Fatalf("append seq %d: %v", e.Seq, err)
		}
	}
	got := read(t, l)
	recs, err := l.Records(ctx)
	if err != nil || len(recs) != len(want) {
		t.Fatalf("%d records, %v; want %d", len(recs), err, len(want))
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Pos <= recs[i-1].Pos {
			t.Errorf("record positions %d then %d", recs[i-1].Pos, recs[i].Pos)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !Equal(got[i], want[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func rejectsInvalid(t *testing.T, l privacy.Ledger) {
	e := Entries()[0]
	e.Sigma = 0
	if err := l.Append(context.Background(), e); !errors.Is(err, privacy.ErrInvalid) || errors.Is(err, privacy.ErrChainMoved) {
		t.Errorf("appending an invalid entry: %v, want ErrInvalid (and not ErrChainMoved)", err)
	}
	if es := read(t, l); len(es) != 0 {
		t.Errorf("invalid entry stored")
	}
}

func rejectsOutOfOrder(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	es := Entries()
	if err := l.Append(ctx, es[1]); err != nil { // seq 2
		t.Fatal(err)
	}
	// Refused as a chain that has moved on: the gate reads that as its cue
	// to read the chain again (an earlier life's entry stored late).
	for _, seq := range []uint64{2, 1} {
		e := es[0]
		e.Seq = seq
		if err := l.Append(ctx, e); !errors.Is(err, privacy.ErrInvalid) || !errors.Is(err, privacy.ErrChainMoved) {
			t.Errorf("seq %d after seq 2: %v, want ErrInvalid and ErrChainMoved", seq, err)
		}
	}
	other := es[2] // another client's seq 1 is fine
	if err := l.Append(ctx, other); err != nil {
		t.Errorf("another client's first entry: %v", err)
	}
}

func noAliasing(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	es := Entries()
	if err := l.Append(ctx, es[0]); err != nil {
		t.Fatal(err)
	}
	e := es[1]
	if err := l.Append(ctx, e); err != nil {
		t.Fatal(err)
	}
	e.NodeIDs[0] = 1234
	got := read(t, l)
	if got[1].NodeIDs[0] == 1234 {
		t.Error("the ledger aliases the appended entry's node ids")
	}
	got[1].NodeIDs[1] = 5678
	again := read(t, l)
	if again[1].NodeIDs[1] == 5678 {
		t.Error("the ledger aliases returned node ids")
	}
}

func cancelled(t *testing.T, l privacy.Ledger) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Append(ctx, Entries()[0]); err == nil {
		t.Error("append with a cancelled context succeeded")
	}
	if es := read(t, l); len(es) != 0 {
		t.Error("append with a cancelled context stored the entry")
	}
}

// testKeys signs with a per-client tag: a stand-in for ed25519 that lets
// the suite check that signatures survive storage byte for byte and that
// the verifier is consulted.
type testKeys struct{}

func (testKeys) sign(client string, d []byte) []byte { return append([]byte(client+":"), d...) }

func (k testKeys) VerifyEntry(_, client string, d, sig []byte) error {
	if string(sig) != string(k.sign(client, d)) {
		return errors.New("bad test signature")
	}
	return nil
}

func chainAndSignature(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	es := Entries()
	for i := range es {
		d, err := es[i].Digest()
		if err != nil {
			t.Fatal(err)
		}
		es[i].Sig = testKeys{}.sign(es[i].Client, d[:])
		if err := l.Append(ctx, es[i]); err != nil {
			t.Fatalf("append seq %d: %v", es[i].Seq, err)
		}
	}
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{Keys: testKeys{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Entries) != len(es) || len(rd.Rejected) != 0 || len(rd.Breaks) != 0 {
		t.Fatalf("signed chain read back as %d entries, rejects %v, breaks %v", len(rd.Entries), rd.Rejected, rd.Breaks)
	}
	for i := range es {
		if !Equal(rd.Entries[i], es[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, rd.Entries[i], es[i])
		}
	}
	// An entry whose predecessor the ledger does not hold is stored (the
	// ledger keeps what its writer sends) but flagged by every reader.
	next := es[len(es)-1]
	next.Seq, next.Sig = 5, nil
	next.Prev = "0000000000000000000000000000000000000000000000000000000000000000"
	if err := l.Append(ctx, next); err != nil {
		t.Fatal(err)
	}
	rd, err = privacy.ReadLedger(ctx, l, privacy.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Breaks) != 1 || rd.Breaks[0].Seq != 5 || rd.Breaks[0].Kind != privacy.BreakGap {
		t.Errorf("entry 5 after 3: breaks %v, want one gap", rd.Breaks)
	}
}

// RecordEntries returns the aggregator's records of a short job and the
// banks' entries anchored to them, in ledger order, hash-chained per
// client: the start record, a bank's release anchored to it, the round-1
// record naming that release, and the done record.
func RecordEntries() []privacy.Entry {
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	es := []privacy.Entry{
		{Seq: 1, Job: "job-1", Client: privacy.AggregatorClient, Channel: privacy.ChannelRound, Round: 0, Time: at},
		{Seq: 1, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelModel, Round: 1, Count: 1, Dim: 8,
			Sigma: 1e-3, Clip: 15, Rho: 30, Time: at.Add(time.Second)},
	}
	linked, err := privacy.LinkEntries(es)
	if err != nil {
		panic(err)
	}
	digest := func(e privacy.Entry) string {
		d, err := e.Digest()
		if err != nil {
			panic(err)
		}
		return hex.EncodeToString(d[:])
	}
	linked[1].Anchor = &privacy.Ref{Seq: 1, Digest: digest(linked[0])}
	head := []privacy.Head{{Client: "bank-3", Seq: 1, Digest: digest(linked[1])}}
	es = append(linked,
		privacy.Entry{Seq: 2, Job: "job-1", Client: privacy.AggregatorClient, Channel: privacy.ChannelRound, Round: 1,
			Time: at.Add(2 * time.Second), Heads: head},
		privacy.Entry{Seq: 3, Job: "job-1", Client: privacy.AggregatorClient, Channel: privacy.ChannelDone, Round: 1,
			Time: at.Add(3 * time.Second), Heads: head})
	if es, err = privacy.LinkEntries(es); err != nil {
		panic(err)
	}
	return es
}

// records: the aggregator's records and an anchored entry round-trip
// exactly (heads and anchor included), and a reader accepts them linked.
func records(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	want := RecordEntries()
	for _, e := range want {
		if err := l.Append(ctx, e); err != nil {
			t.Fatalf("append %s seq %d of %s: %v", e.Channel, e.Seq, e.Client, err)
		}
	}
	got := read(t, l)
	if len(got) != len(want) {
		t.Fatalf("%d entries read back, want %d", len(got), len(want))
	}
	for i := range want {
		if !Equal(got[i], want[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !privacy.AggregatorRan(rd, "job-1") || len(privacy.AggregatorRecords(rd, "job-1")) != 3 {
		t.Errorf("the aggregator's records are not read back as its: %v", privacy.AggregatorRecords(rd, "job-1"))
	}
	// A record repeated at its seq is refused as a moved chain, as any
	// client's entry.
	if err := l.Append(ctx, want[2]); !errors.Is(err, privacy.ErrChainMoved) {
		t.Errorf("the round-1 record again after the done record: %v, want ErrChainMoved", err)
	}
}

// rejectsBadRecords: a ledger refuses records that Validate refuses —
// release fields on a record, a record by a bank, unsorted heads, an
// anchor that names no entry — and stores none of them.
func rejectsBadRecords(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	es := RecordEntries()
	bad := []privacy.Entry{es[2], es[2], es[2], es[1]}
	bad[0].Sigma = 1
	bad[1].Client = "bank-3"
	bad[2].Heads = []privacy.Head{es[2].Heads[0], {Client: "bank-1", Seq: 1, Digest: es[2].Heads[0].Digest}}
	bad[3].Anchor = &privacy.Ref{Seq: 0, Digest: "x"}
	for i, e := range bad {
		e.Seq, e.Prev = 1, ""
		if err := l.Append(ctx, e); !errors.Is(err, privacy.ErrInvalid) || errors.Is(err, privacy.ErrChainMoved) {
			t.Errorf("bad record %d: %v, want ErrInvalid (and not ErrChainMoved)", i, err)
		}
	}
	if es := read(t, l); len(es) != 0 {
		t.Errorf("%d invalid records stored", len(es))
	}
}

func equalSecAgg(a, b privacy.SecAggRecord) bool {
	return slices.Equal(a.Cohort, b.Cohort) && a.Threshold == b.Threshold && a.Bits == b.Bits && a.Scale == b.Scale &&
		a.Degree == b.Degree && slices.Equal(a.Neighbours, b.Neighbours) && a.Config == b.Config && slices.Equal(a.Stale, b.Stale)
}

// SecAggEntries returns two banks' releases and secure-aggregation records
// of two rounds, in ledger order, hash-chained per client as a gate writes
// them; bank-3's second record folds round 1 in, and bank-10's is
// anchored.
func SecAggEntries() []privacy.Entry {
	at := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	cohort := []string{"bank-10", "bank-3", "bank-7"}
	config := strings.Repeat("5e", 32)
	rec := func(self string, stale []uint64) *privacy.SecAggRecord {
		var nb []string
		for _, p := range cohort {
			if p != self {
				nb = append(nb, p)
			}
		}
		return &privacy.SecAggRecord{Cohort: slices.Clone(cohort), Threshold: 2, Bits: 30, Scale: 1 << 22, Degree: 2,
			Neighbours: nb, Config: config, Stale: stale}
	}
	anchor := &privacy.Ref{Seq: 4, Digest: strings.Repeat("a1", 32)}
	es := []privacy.Entry{
		{Seq: 1, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelModel, Round: 1, Count: 1, Dim: 8,
			Sigma: 1e-3, Clip: 15, Rho: 30, Time: at},
		{Seq: 2, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelSecAgg, Round: 1, Time: at.Add(time.Second), SecAgg: rec("bank-3", nil)},
		{Seq: 1, Job: "job-1", Client: "bank-10", Channel: privacy.ChannelSecAgg, Round: 2, Time: at.Add(2 * time.Second),
			SecAgg: rec("bank-10", nil), Anchor: anchor, Seeded: true},
		{Seq: 3, Job: "job-1", Client: "bank-3", Channel: privacy.ChannelSecAgg, Round: 2, Time: at.Add(3 * time.Second),
			SecAgg: rec("bank-3", []uint64{1})},
	}
	linked, err := privacy.LinkEntries(es)
	if err != nil {
		panic(err)
	}
	return linked
}

// secAgg: secure-aggregation records round-trip exactly, signed and
// chained among releases, and a keyed reader accepts them all.
func secAgg(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	want := SecAggEntries()
	for i := range want {
		d, err := want[i].Digest()
		if err != nil {
			t.Fatal(err)
		}
		want[i].Sig = testKeys{}.sign(want[i].Client, d[:])
		if err := l.Append(ctx, want[i]); err != nil {
			t.Fatalf("append %s seq %d of %s: %v", want[i].Channel, want[i].Seq, want[i].Client, err)
		}
	}
	rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{Keys: testKeys{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Entries) != len(want) || len(rd.Rejected) != 0 || len(rd.Breaks) != 0 {
		t.Fatalf("secagg chain read back as %d entries, rejects %v, breaks %v", len(rd.Entries), rd.Rejected, rd.Breaks)
	}
	for i := range want {
		if !Equal(rd.Entries[i], want[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, rd.Entries[i], want[i])
		}
	}
	// Neither the appended records nor those returned are the ledger's.
	want[1].SecAgg.Neighbours[0] = "bank-99"
	rd.Entries[3].SecAgg.Stale[0] = 7
	again := read(t, l)
	if n := again[1].SecAgg.Neighbours[0]; n != "bank-10" {
		t.Errorf("the ledger aliases an appended record: neighbour %s", n)
	}
	if s := again[3].SecAgg.Stale[0]; s != 1 {
		t.Errorf("the ledger aliases a returned record: stale round %d", s)
	}
	want = SecAggEntries()
	// The repeat of the last stored entry is a retry or a moved chain,
	// never a second record.
	if err := l.Append(ctx, want[1]); !errors.Is(err, privacy.ErrChainMoved) {
		t.Errorf("bank-3's round-1 record again after its round-2 one: %v, want ErrChainMoved", err)
	}
}

// rejectsBadSecAgg: a ledger refuses secagg records Validate refuses — no
// record, release fields, a record on a release, a cohort without the
// bank — and stores none of them.
func rejectsBadSecAgg(t *testing.T, l privacy.Ledger) {
	ctx := context.Background()
	es := SecAggEntries()
	bad := []privacy.Entry{es[1], es[1], es[0], es[1]}
	bad[0].SecAgg = nil
	bad[1].Sigma = 1
	bad[2].SecAgg = es[1].SecAgg
	bad[3].Client = "bank-9"
	for i, e := range bad {
		e.Seq, e.Prev = 1, ""
		if err := l.Append(ctx, e); !errors.Is(err, privacy.ErrInvalid) || errors.Is(err, privacy.ErrChainMoved) {
			t.Errorf("bad secagg entry %d: %v, want ErrInvalid (and not ErrChainMoved)", i, err)
		}
	}
	if es := read(t, l); len(es) != 0 {
		t.Errorf("%d invalid secagg entries stored", len(es))
	}
}
