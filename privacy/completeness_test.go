package privacy_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
)

// jobKeys signs as each party with a keyed hash of its id: a stand-in for
// the keyring that gives the same signatures on every run, so that the
// golden report is stable.
type jobKeys struct{}

func (jobKeys) sign(client string, d []byte) []byte {
	h := sha256.Sum256(append([]byte("test key of "+client+"\x00"), d...))
	return h[:]
}

func (k jobKeys) VerifyEntry(_, client string, d, sig []byte) error {
	if !bytes.Equal(sig, k.sign(client, d)) {
		return errors.New("bad test signature")
	}
	return nil
}

type jobSigner string

func (s jobSigner) SignEntry(d []byte) ([]byte, error) { return jobKeys{}.sign(string(s), d), nil }

const compJob = "job-c"

var compBanks = []string{"bank-a", "bank-b", "bank-c"}

// runJob writes the ledger of a small job as the parties write it: the
// aggregator's start record, then each round every bank releases its
// model and its boundary embeddings, anchored to the aggregator's latest
// record, and reports its head; the aggregator records the heads at the
// close; after the last round each bank records a calibration (anchored
// to the last round record) and the aggregator its done record with the
// final heads. It returns the ledger and those final heads, the
// aggregator's own included (what its report lists).
func runJob(t *testing.T, rounds int) (*privacy.MemLedger, []privacy.Head) {
	t.Helper()
	ctx := context.Background()
	l := privacy.NewMemLedger()
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	gate := func(client string) *privacy.Gate {
		g, err := privacy.NewGate(ctx, privacy.Config{Job: compJob, Client: client, Delta: 1e-5,
			Signer: jobSigner(client), Keys: jobKeys{}}, l, clock)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	agg := gate(privacy.AggregatorClient)
	banks := make([]*privacy.Gate, len(compBanks))
	for i, b := range compBanks {
		banks[i] = gate(b)
	}
	heads := func() []privacy.Head {
		var hs []privacy.Head
		for i, g := range banks {
			if h := g.Head(); !h.IsZero() {
				hs = append(hs, privacy.Head{Client: compBanks[i], Seq: h.Seq, Digest: h.Digest})
			}
		}
		return hs
	}
	ref := func(e privacy.Entry) privacy.Ref {
		d, err := e.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return privacy.Ref{Seq: e.Seq, Digest: hexs(d[:])}
	}
	rec, err := agg.RecordRound(ctx, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r := uint64(1); r <= uint64(rounds); r++ {
		for i, g := range banks {
			g.SetAnchor(ref(rec))
			if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: r, Flat: []float32{1, 2}, Dim: 2, Sigma: 1, Clip: 5}); err != nil {
				t.Fatal(err)
			}
			ids := []int64{int64(100*i + 1), int64(100*i + 2)}
			if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: r, Rows: [][]float32{{1, 0}, {0, 1}}, NodeIDs: ids, Sigma: 0.5}); err != nil {
				t.Fatal(err)
			}
		}
		if rec, err = agg.RecordRound(ctx, r, heads()); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range banks {
		g.SetAnchor(ref(rec))
		if _, err := g.RecordCalibration(ctx, uint64(rounds), privacy.Calibration{K: 1, N: 2, Q: []float64{90}, Rho: []float64{0.2}}); err != nil {
			t.Fatal(err)
		}
	}
	done, err := agg.RecordDone(ctx, uint64(rounds), heads())
	if err != nil {
		t.Fatal(err)
	}
	final := append(heads(), privacy.Head{Client: privacy.AggregatorClient, Seq: done.Seq, Digest: ref(done).Digest})
	privacy.SortHeads(final)
	return l, final
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// subset rebuilds a ledger from the records of l that keep accepts, in
// order, as an administrator who deleted the stream and stored back part
// of it would.
func subset(t *testing.T, l *privacy.MemLedger, keep func(e privacy.Entry, last map[string]uint64) bool) *privacy.MemLedger {
	t.Helper()
	recs, err := l.Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]uint64{}
	for _, r := range recs {
		e, err := privacy.DecodeEntry(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		last[e.Client] = max(last[e.Client], e.Seq)
	}
	out := privacy.NewMemLedger()
	for _, r := range recs {
		e, _ := privacy.DecodeEntry(r.Data)
		if keep(e, last) {
			out.AppendRaw(r.Data)
		}
	}
	return out
}

func auditOf(t *testing.T, l privacy.Ledger, expect []privacy.Head) privacy.Report {
	t.Helper()
	rd, err := privacy.ReadLedger(context.Background(), l, privacy.VerifyOptions{Keys: jobKeys{}, Job: compJob})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Delta: 1e-5, Job: compJob, ExpectHeads: expect})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func reportText(t *testing.T, rep privacy.Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCompletenessFlagsSubsets rebuilds a job's ledger from subsets of it
// and checks that the audit says, in the right words, what was lost.
func TestCompletenessFlagsSubsets(t *testing.T) {
	const rounds = 3
	full, final := runJob(t, rounds)
	// Round-1 entries of a bank are its seqs 1 and 2 (model, emb); the
	// aggregator's start and round-1 records are its seqs 1 and 2.
	round1 := func(e privacy.Entry, _ map[string]uint64) bool { return e.Seq <= 2 }
	cases := []struct {
		name   string
		keep   func(e privacy.Entry, last map[string]uint64) bool
		expect []privacy.Head
		intact bool
		// unverified are the clients whose claim must be flagged; want
		// phrases the report must hold, and wantNot phrases it must not.
		unverified []string
		want       []string
		wantNot    []string
	}{
		{name: "untouched", keep: func(privacy.Entry, map[string]uint64) bool { return true }, intact: true,
			want: []string{
				"aggregator: 5 records (start, rounds 1–3, done), chain verified",
				"bank-a: 7 entries, chain verified, head matches the aggregator's done record",
				"bank-c: 7 entries, chain verified, head matches the aggregator's done record",
				"the ledger is complete as far as the aggregator's records and the banks' anchors show",
			},
			wantNot: []string{"EVIDENCE", "NOT INTACT", "CLAIM UNVERIFIED"}},
		{name: "untouched, expected heads", keep: func(privacy.Entry, map[string]uint64) bool { return true }, expect: final, intact: true,
			want:    []string{"the 4 expected heads given to the audit match: every chain they name reaches its final head"},
			wantNot: []string{"EVIDENCE", "NOT INTACT"}},
		{name: "a bank's tail dropped",
			keep: func(e privacy.Entry, last map[string]uint64) bool {
				return e.Client != "bank-b" || e.Seq <= last[e.Client]-3
			},
			unverified: []string{compJob + "/bank-b"},
			want: []string{
				"EVIDENCE bank-b: the aggregator's done record names entry 7 (digest ",
				"but the ledger ends at entry 4: entries were lost or removed",
				"bank-a: 7 entries, chain verified, head matches the aggregator's done record",
				"the ledger is NOT complete",
				"ledger integrity: NOT INTACT",
			}},
		{name: "every chain's tail dropped, the done record too", keep: round1,
			unverified: []string{compJob + "/bank-a", compJob + "/bank-b", compJob + "/bank-c"},
			want: []string{
				"aggregator: 2 records (start, round 1), chain verified",
				"no done record: the ledger may have lost its tail (or the job has not finished); verified up to round 1 only",
				"bank-a: 2 entries, chain verified, head matches the aggregator's round-1 record",
				"ledger integrity: NOT INTACT",
			},
			wantNot: []string{"EVIDENCE"}},
		{name: "every chain's tail dropped, expected heads", keep: round1, expect: final,
			unverified: []string{compJob + "/bank-a", compJob + "/bank-b", compJob + "/bank-c"},
			want: []string{
				"EVIDENCE aggregator: the expected heads given to the audit name the aggregator's record 5 (digest ",
				"but the ledger ends at record 2: entries were lost or removed",
				"EVIDENCE bank-b: the expected heads given to the audit name bank-b's entry 7 (digest ",
				"but the ledger ends at entry 2: entries were lost or removed",
			}},
		{name: "the aggregator's records dropped",
			keep:       func(e privacy.Entry, _ map[string]uint64) bool { return e.Client != privacy.AggregatorClient },
			unverified: []string{compJob + "/bank-a", compJob + "/bank-b", compJob + "/bank-c"},
			want: []string{
				"EVIDENCE aggregator: no record in the ledger, but the banks' entries name its records: they were lost or removed",
				"EVIDENCE bank-a: its entry 7 names the aggregator's record 4 (digest ",
				"but the ledger holds no record of the aggregator: they were lost or removed",
				"no record of the aggregator names it",
			}},
		{name: "the aggregator's done record dropped",
			keep: func(e privacy.Entry, last map[string]uint64) bool {
				return e.Client != privacy.AggregatorClient || e.Seq < last[e.Client]
			},
			unverified: []string{compJob + "/bank-a", compJob + "/bank-b", compJob + "/bank-c"},
			want: []string{
				"no done record: the ledger may have lost its tail (or the job has not finished); verified up to round 3 only",
				"bank-a: 7 entries, chain verified, head matches the aggregator's round-3 record",
				"bank-a: entries 7 to 7 come after the head the aggregator's round-3 record names: no record covers them",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := auditOf(t, subset(t, full, tc.keep), tc.expect)
			text := reportText(t, rep)
			in := rep.Integrity
			if in.Intact != tc.intact || in.Completeness.Intact != tc.intact {
				t.Errorf("intact %v (completeness %v), want %v\n%s", in.Intact, in.Completeness.Intact, tc.intact, text)
			}
			if !slices.Equal(in.Unverified, tc.unverified) && !(len(in.Unverified) == 0 && len(tc.unverified) == 0) {
				t.Errorf("unverified %v, want %v\n%s", in.Unverified, tc.unverified, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("report lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("report has %q:\n%s", w, text)
				}
			}
		})
	}
}

// The ε figures of a ledger do not depend on the aggregator's records:
// they are not releases, and they add no round.
func TestRecordsChangeNoEpsilon(t *testing.T) {
	full, _ := runJob(t, 3)
	banksOnly := subset(t, full, func(e privacy.Entry, _ map[string]uint64) bool { return e.Client != privacy.AggregatorClient })
	a, b := auditOf(t, full, nil), auditOf(t, banksOnly, nil)
	if a.Records != 5 || b.Records != 0 || a.Entries != b.Entries || a.Releases != b.Releases || len(a.Rounds) != len(b.Rounds) || len(a.Rounds) != 3 {
		t.Fatalf("records %d/%d entries %d/%d releases %d/%d rounds %d/%d", a.Records, b.Records, a.Entries, b.Entries, a.Releases, b.Releases, len(a.Rounds), len(b.Rounds))
	}
	ja, _ := json.Marshal([]any{a.Channels, a.Clients, a.Percentiles, a.Rounds, a.Nodes})
	jb, _ := json.Marshal([]any{b.Channels, b.Clients, b.Percentiles, b.Rounds, b.Nodes})
	if !bytes.Equal(ja, jb) {
		t.Errorf("figures differ with and without the records:\n%s\n%s", ja, jb)
	}
}

// TestCompletenessGolden fixes the report's words for a job whose bank
// lost its tail.
func TestCompletenessGolden(t *testing.T) {
	full, final := runJob(t, 2)
	cut := subset(t, full, func(e privacy.Entry, last map[string]uint64) bool { return e.Client != "bank-c" || e.Seq <= 2 })
	var b bytes.Buffer
	for _, l := range []privacy.Ledger{full, cut} {
		b.WriteString(reportText(t, auditOf(t, l, final)))
		b.WriteString("----\n")
	}
	checkGolden(t, "audit_completeness.golden", b.Bytes())
}

// Only the aggregator's own, verified records say that it ran the job:
// a bank's junk filed under its name does not.
func TestAggregatorRan(t *testing.T) {
	ctx := context.Background()
	l := privacy.NewMemLedger()
	g, err := privacy.NewGate(ctx, privacy.Config{Job: compJob, Client: "bank-a", Delta: 1e-5, Signer: jobSigner("bank-a"), Keys: jobKeys{}}, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: 1, Flat: []float32{1}, Dim: 1, Sigma: 1, Clip: 1}); err != nil {
		t.Fatal(err)
	}
	// A record in the aggregator's name, signed by the bank.
	forged := privacy.Entry{Seq: 1, Job: compJob, Client: privacy.AggregatorClient, Channel: privacy.ChannelRound, Time: time.Unix(0, 0).UTC()}
	d, _ := forged.Digest()
	forged.Sig = jobKeys{}.sign("bank-a", d[:])
	b, _ := privacy.EncodeEntry(forged)
	l.AppendRaw(b)
	l.AppendRaw([]byte(`{"junk": true}`))
	read := func(keys privacy.KeyVerifier) privacy.Reading {
		rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{Keys: keys, Job: compJob})
		if err != nil {
			t.Fatal(err)
		}
		return rd
	}
	if privacy.AggregatorRan(read(jobKeys{}), compJob) {
		t.Error("a record the bank forged counts as the aggregator's")
	}
	agg, err := privacy.NewGate(ctx, privacy.Config{Job: compJob, Client: privacy.AggregatorClient, Delta: 1e-5,
		Signer: jobSigner(privacy.AggregatorClient), Keys: jobKeys{}}, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agg.RecordRound(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !privacy.AggregatorRan(read(jobKeys{}), compJob) {
		t.Error("the aggregator's own record does not count")
	}
	// A bank cannot write a record, nor the aggregator a release.
	for _, e := range []privacy.Entry{
		{Seq: 1, Job: compJob, Client: "bank-a", Channel: privacy.ChannelDone, Time: time.Unix(0, 0).UTC()},
		{Seq: 1, Job: compJob, Client: privacy.AggregatorClient, Channel: privacy.ChannelModel, Count: 1, Dim: 1, Sigma: 1, Clip: 1, Rho: 2, Time: time.Unix(0, 0).UTC()},
	} {
		if err := e.Validate(); !errors.Is(err, privacy.ErrInvalid) {
			t.Errorf("%s entry of %s validates: %v", e.Channel, e.Client, err)
		}
	}
}

func TestParseHeads(t *testing.T) {
	d := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		in   string
		want int
		ok   bool
	}{
		{"list", `[{"client":"bank-b","seq":3,"digest":"` + d + `"},{"client":"aggregator","seq":9,"digest":"` + d + `"}]`, 2, true},
		{"report", `{"command":"aggregator","metrics":{"ledger_heads":[{"client":"bank-a","seq":1,"digest":"` + d + `"}]}}`, 1, true},
		{"top level", `{"ledger_heads":[]}`, 0, true},
		{"report after other output", "progress\n{\"metrics\":{\"ledger_heads\":[{\"client\":\"bank-a\",\"seq\":1,\"digest\":\"" + d + "\"}]}}\n", 1, true},
		{"sim summary", `{"command":"sim","privacy":{"ledger_heads":[]}}`, 0, false},
		{"no heads", `{"metrics":{}}`, 0, false},
		{"bad digest", `[{"client":"bank-a","seq":1,"digest":"xyz"}]`, 0, false},
		{"seq 0", `[{"client":"bank-a","seq":0,"digest":"` + d + `"}]`, 0, false},
		{"twice", `[{"client":"bank-a","seq":1,"digest":"` + d + `"},{"client":"bank-a","seq":2,"digest":"` + d + `"}]`, 0, false},
		{"unknown field", `[{"client":"bank-a","seq":1,"digest":"` + d + `","x":1}]`, 0, false},
		{"garbage", `nope`, 0, false},
	}
	for _, tc := range cases {
		hs, err := privacy.ParseHeads([]byte(tc.in))
		if (err == nil) != tc.ok || len(hs) != tc.want {
			t.Errorf("%s: %v %v", tc.name, hs, err)
		}
		if err != nil && !errors.Is(err, privacy.ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", tc.name, err)
		}
		if err == nil && !slices.IsSortedFunc(hs, func(a, b privacy.Head) int { return strings.Compare(a.Client, b.Client) }) {
			t.Errorf("%s: heads not sorted: %v", tc.name, hs)
		}
	}
}
