package privacy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// secAggEntry is bank-b's valid record of round 5 of a cohort of four,
// each party masking with two neighbours.
func secAggEntry() Entry {
	return Entry{Seq: 3, Job: "job-1", Client: "bank-b", Channel: ChannelSecAgg, Round: 5, Time: testTime,
		Prev: strings.Repeat("ab", 32),
		SecAgg: &SecAggRecord{Cohort: []string{"bank-a", "bank-b", "bank-c", "bank-d"}, Threshold: 2, Bits: 30, Scale: 1 << 22,
			Degree: 2, Neighbours: []string{"bank-a", "bank-c"}, Config: strings.Repeat("0f", 32), Stale: []uint64{3, 4}}}
}

func TestSecAggValidate(t *testing.T) {
	ids := func(n int, skip string) []string {
		var out []string
		for i := 0; len(out) < n; i++ {
			if id := fmt.Sprintf("bank-%04d", i); id != skip {
				out = append(out, id)
			}
		}
		return out
	}
	cases := []struct {
		name string
		edit func(e *Entry)
		want string // "": valid
	}{
		{"valid", func(*Entry) {}, ""},
		{"no stale rounds", func(e *Entry) { e.SecAgg.Stale = nil }, ""},
		{"complete graph", func(e *Entry) {
			e.SecAgg.Degree, e.SecAgg.Neighbours, e.SecAgg.Threshold = 3, []string{"bank-a", "bank-c", "bank-d"}, 4
		}, ""},
		{"two parties", func(e *Entry) {
			e.SecAgg.Cohort, e.SecAgg.Degree, e.SecAgg.Neighbours = []string{"bank-a", "bank-b"}, 1, []string{"bank-a"}
		}, ""},
		{"the largest cohort", func(e *Entry) {
			e.Client = "bank-0000"
			e.SecAgg.Cohort, e.SecAgg.Degree, e.SecAgg.Neighbours = ids(MaxSecAggCohort, ""), MaxSecAggCohort-1, ids(MaxSecAggCohort-1, "bank-0000")
		}, ""},
		{"seeded and anchored", func(e *Entry) { e.Seeded, e.Anchor = true, &Ref{Seq: 2, Digest: strings.Repeat("01", 32)} }, ""},
		{"b = 32", func(e *Entry) { e.SecAgg.Bits = 32 }, ""},

		{"no record", func(e *Entry) { e.SecAgg = nil }, "without its record"},
		{"a record on a release", func(e *Entry) {
			e.Channel, e.Count, e.Dim, e.Sigma, e.Clip, e.Rho = ChannelModel, 1, 1, 1, 1, 2
		}, "secagg record on a model entry"},
		{"a record on a calibration", func(e *Entry) {
			e.Channel, e.Calibration = ChannelCalibration, &Calibration{K: 1, N: 2, Q: []float64{50}, Rho: []float64{0.1}}
		}, "secagg record on a calibration entry"},
		{"a record on the aggregator's record", func(e *Entry) { e.Channel, e.Client = ChannelRound, AggregatorClient }, "secagg record on a round record"},
		{"the aggregator records one", func(e *Entry) { e.Client = AggregatorClient }, "only it writes them"},
		{"release fields", func(e *Entry) { e.Sigma = 1 }, "release fields"},
		{"node ids", func(e *Entry) { e.NodeIDs = []int64{} }, "release fields"},
		{"calibration too", func(e *Entry) { e.Calibration = &Calibration{K: 1, Q: []float64{50}, Rho: []float64{0.1}} }, "calibration on a secagg entry"},
		{"heads", func(e *Entry) { e.Heads = []Head{} }, "heads on a secagg entry"},
		{"a cohort of one", func(e *Entry) { e.SecAgg.Cohort = []string{"bank-b"} }, "cohort of 1 parties"},
		{"a cohort too large", func(e *Entry) {
			e.Client = "bank-0000"
			e.SecAgg.Cohort = ids(MaxSecAggCohort+1, "")
		}, "cohort of 1025 parties"},
		{"an unsorted cohort", func(e *Entry) { e.SecAgg.Cohort = []string{"bank-a", "bank-c", "bank-b", "bank-d"} }, "cohort not sorted"},
		{"a party twice", func(e *Entry) { e.SecAgg.Cohort = []string{"bank-a", "bank-b", "bank-c", "bank-c"} }, "cohort not sorted, or bank-c"},
		{"a bad id", func(e *Entry) { e.SecAgg.Cohort[0] = "Bank.A" }, `member "Bank.A": not a bank id`},
		{"the aggregator in the cohort", func(e *Entry) { e.SecAgg.Cohort[0] = AggregatorClient }, "not a bank id"},
		{"a cohort without the bank", func(e *Entry) { e.SecAgg.Cohort[1] = "bank-bb" }, "without the recording bank bank-b"},
		{"degree 0", func(e *Entry) { e.SecAgg.Degree, e.SecAgg.Neighbours = 0, nil }, "degree 0"},
		{"degree n", func(e *Entry) { e.SecAgg.Degree = 4 }, "degree 4 in a cohort of 4"},
		{"fewer neighbours than the degree", func(e *Entry) { e.SecAgg.Neighbours = []string{"bank-a"} }, "1 secagg neighbours for degree 2"},
		{"itself a neighbour", func(e *Entry) { e.SecAgg.Neighbours = []string{"bank-a", "bank-b"} }, "lists itself"},
		{"a neighbour outside the cohort", func(e *Entry) { e.SecAgg.Neighbours = []string{"bank-a", "bank-e"} }, "neighbour bank-e is not in the cohort"},
		{"unsorted neighbours", func(e *Entry) { e.SecAgg.Neighbours = []string{"bank-c", "bank-a"} }, "neighbours not sorted"},
		{"t = 1", func(e *Entry) { e.SecAgg.Threshold = 1 }, "threshold t = 1"},
		{"t above the neighbourhood", func(e *Entry) { e.SecAgg.Threshold = 4 }, "threshold t = 4 with neighbourhoods of 3"},
		{"b = 0", func(e *Entry) { e.SecAgg.Bits = 0 }, "b = 0 bits"},
		{"b = 33", func(e *Entry) { e.SecAgg.Bits = 33 }, "b = 33 bits"},
		{"a zero scale", func(e *Entry) { e.SecAgg.Scale = 0 }, "scale 0"},
		{"an infinite scale", func(e *Entry) { e.SecAgg.Scale = math.Inf(1) }, "scale +Inf"},
		{"a short config digest", func(e *Entry) { e.SecAgg.Config = "0f0f" }, "not a hex SHA-256 digest"},
		{"an upper-case config digest", func(e *Entry) { e.SecAgg.Config = strings.Repeat("0F", 32) }, "not a hex SHA-256 digest"},
		{"stale listed empty", func(e *Entry) { e.SecAgg.Stale = []uint64{} }, "0 stale rounds"},
		{"too many stale rounds", func(e *Entry) {
			e.Round = 1000
			e.SecAgg.Stale = make([]uint64, MaxSecAggStale+1)
			for i := range e.SecAgg.Stale {
				e.SecAgg.Stale[i] = uint64(i)
			}
		}, "257 stale rounds"},
		{"a stale round not earlier", func(e *Entry) { e.SecAgg.Stale = []uint64{3, 5} }, "stale round 5 folded into round 5"},
		{"stale rounds out of order", func(e *Entry) { e.SecAgg.Stale = []uint64{4, 3} }, "not ascending"},
		{"a stale round twice", func(e *Entry) { e.SecAgg.Stale = []uint64{3, 3} }, "round 3 listed twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := secAggEntry()
			tc.edit(&e)
			err := e.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid record refused: %v", err)
				}
				// What Validate accepts round-trips through the stored form.
				b, err := EncodeEntry(e)
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeEntry(b)
				if err != nil {
					t.Fatalf("stored record %s refused: %v", b, err)
				}
				d1, _ := e.Digest()
				d2, _ := back.Digest()
				if d1 != d2 {
					t.Fatalf("digest changed through the stored form %s", b)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v; want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

// An entry without a record encodes as it did before records existed: no
// "secagg" field, so every digest of an older ledger is what it was.
func TestSecAggAbsentFromOtherEntries(t *testing.T) {
	e := Entry{Seq: 1, Job: "job-1", Client: "bank-3", Channel: ChannelModel, Round: 1, Count: 1, Dim: 8,
		Sigma: 1e-3, Clip: 15, Rho: 30, Time: testTime}
	b, err := EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"seq":1,"job":"job-1","client":"bank-3","channel":"model","round":1,"count":1,"dim":8,"sigma":0.001,"clip":15,"rho":30,"time":"2026-03-01T12:00:00Z","seeded":false}`
	if string(b) != want {
		t.Fatalf("encoded %s\nwant    %s", b, want)
	}
}

// RecordSecAgg seals, chains, signs and anchors its record as any entry,
// spends nothing, copies what it is given, and a failed append is repeated
// before the gate's next entry.
func TestRecordSecAgg(t *testing.T) {
	ctx := context.Background()
	seed := uint64(2)
	l := NewMemLedger()
	g := newTestGate(t, Config{Job: "job-1", Client: "bank-b", Seed: &seed, Signer: fuzzSigner("bank-b"), Keys: fuzzKeys{},
		Budget: Budget{Epsilon: 50}}, l)
	if _, err := g.Release(ctx, Request{Channel: ChannelModel, Round: 5, Flat: []float32{3, 4}, Dim: 2, Sigma: 2, Clip: 1}); err != nil {
		t.Fatal(err)
	}
	before := g.Spent(1)
	head := g.Head()
	anchor := Ref{Seq: 7, Digest: strings.Repeat("a7", 32)}
	g.SetAnchor(anchor)

	if _, err := g.RecordSecAgg(ctx, 5, SecAggRecord{Cohort: []string{"bank-b"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an invalid record: %v, want ErrInvalid", err)
	}
	if g.Head() != head {
		t.Fatal("an invalid record moved the chain head")
	}
	r := *secAggEntry().SecAgg
	e, err := g.RecordSecAgg(ctx, 5, r)
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 2 || e.Channel != ChannelSecAgg || e.Round != 5 || e.Prev != head.Digest || !e.Seeded ||
		e.Anchor == nil || *e.Anchor != anchor || !slices.Equal(e.SecAgg.Stale, r.Stale) {
		t.Fatalf("recorded %+v", e)
	}
	d, _ := e.Digest()
	if (fuzzKeys{}).VerifyEntry("job-1", "bank-b", d[:], e.Sig) != nil {
		t.Fatal("the record is not signed by its bank")
	}
	if after := g.Spent(1); after.Client != before.Client || after.Channels[ChannelModel] != before.Channels[ChannelModel] || len(after.Channels) != 1 {
		t.Fatalf("the record spent budget: %+v, before %+v", after, before)
	}
	r.Neighbours[0] = "bank-d" // the caller's copy, not the ledger's
	es := ledgerEntries(t, l)
	if len(es) != 2 || es[1].SecAgg.Neighbours[0] != "bank-a" || g.Head() != (Ref{Seq: 2, Digest: hex.EncodeToString(d[:])}) {
		t.Fatalf("ledger %+v, head %v", es, g.Head())
	}

	// A failed append stays pending and goes first once the ledger is back.
	boom := errors.New("disk on fire")
	l.FailAppends(boom)
	if _, err := g.RecordSecAgg(ctx, 6, SecAggRecord{Cohort: []string{"bank-a", "bank-b"}, Threshold: 2, Bits: 30, Scale: 4,
		Degree: 1, Neighbours: []string{"bank-a"}, Config: strings.Repeat("0f", 32), Stale: []uint64{}}); !errors.Is(err, boom) {
		t.Fatalf("append to a failing ledger: %v", err)
	}
	l.FailAppends(nil)
	rel, err := g.Release(ctx, Request{Channel: ChannelModel, Round: 6, Flat: []float32{1, 0}, Dim: 2, Sigma: 2, Clip: 1})
	if err != nil || rel.Entry().Seq != 4 {
		t.Fatalf("release after the pending record: seq %d, %v", rel.Entry().Seq, err)
	}
	rd, err := ReadLedger(ctx, l, VerifyOptions{Keys: fuzzKeys{}})
	if err != nil || len(rd.Entries) != 4 || len(rd.Rejected)+len(rd.Breaks) != 0 || rd.Entries[2].Channel != ChannelSecAgg || rd.Entries[2].SecAgg.Stale != nil {
		t.Fatalf("ledger after the repeat: %+v rejects %v breaks %v, %v", rd.Entries, rd.Rejected, rd.Breaks, err)
	}
	// A gate rebuilt from the ledger spends what this one does.
	if a, b := newTestGate(t, g.cfg, l).Spent(1), g.Spent(1); a.Client != b.Client {
		t.Fatalf("rebuilt gate spent %v, want %v", a.Client, b.Client)
	}
}
