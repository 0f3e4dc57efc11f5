package privacy_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

// secAggJob is a job of three banks and four rounds, each bank releasing
// its model and estimator every round and recording the round's secure
// aggregation, but for the exceptions given: skip[bank] are rounds the
// bank recorded nothing for, and fold[bank][r] the earlier rounds its
// round-r input folds in. edit, when set, changes a record before it is
// linked.
func secAggJob(t *testing.T, skip map[string][]uint64, fold map[string]map[uint64][]uint64, edit func(e *privacy.Entry)) []privacy.Entry {
	t.Helper()
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	cohort := []string{"bank-a", "bank-b", "bank-c"}
	seq := map[string]uint64{}
	var es []privacy.Entry
	add := func(e privacy.Entry) {
		seq[e.Client]++
		e.Seq, e.Job, e.Time = seq[e.Client], "job-1", at.Add(time.Duration(len(es))*time.Second)
		es = append(es, e)
	}
	for r := uint64(1); r <= 4; r++ {
		for _, b := range cohort {
			add(privacy.Entry{Client: b, Channel: privacy.ChannelModel, Round: r, Count: 1, Dim: 8, Sigma: 0.5, Clip: 1, Rho: 2})
			add(privacy.Entry{Client: b, Channel: privacy.ChannelGrad, Round: r, Count: 1, Dim: 8, Sigma: 4, Clip: 1, Rho: 2})
			if slices.Contains(skip[b], r) {
				continue
			}
			var nb []string
			for _, p := range cohort {
				if p != b {
					nb = append(nb, p)
				}
			}
			e := privacy.Entry{Client: b, Channel: privacy.ChannelSecAgg, Round: r, SecAgg: &privacy.SecAggRecord{
				Cohort: cohort, Threshold: 2, Bits: 30, Scale: 1 << 22, Degree: 2, Neighbours: nb,
				Config: strings.Repeat(string("0123"[r%4])+"f", 32), Stale: fold[b][r]}}
			if edit != nil {
				edit(&e)
			}
			add(e)
		}
	}
	linked, err := privacy.LinkEntries(es)
	if err != nil {
		t.Fatal(err)
	}
	return linked
}

func withoutSecAgg(es []privacy.Entry) []privacy.Entry {
	return slices.DeleteFunc(slices.Clone(es), func(e privacy.Entry) bool { return e.Channel == privacy.ChannelSecAgg })
}

func TestAuditSecureAggregation(t *testing.T) {
	type want struct {
		secure, rounds int
		clear          []uint64
		conflicts      int
		words          string // a phrase the model channel's words hold
	}
	cases := []struct {
		name string
		skip map[string][]uint64
		fold map[string]map[uint64][]uint64
		edit func(e *privacy.Entry)
		want want
	}{
		{name: "every round", want: want{secure: 4, rounds: 4,
			words: "model channel: aggregated securely in 4 of 4 rounds (t = 2 of 3 banks): the aggregator saw the sum of at least 2 banks' updates, never one bank's"}},
		{name: "one bank in the clear in round 3", skip: map[string][]uint64{"bank-c": {3}},
			want: want{secure: 3, rounds: 4, clear: []uint64{3}, words: "in the other round (3) it saw each bank's update as released"}},
		{name: "a late update folded into the next round", skip: map[string][]uint64{"bank-b": {2}},
			fold: map[string]map[uint64][]uint64{"bank-b": {3: {2}}}, want: want{secure: 4, rounds: 4, words: "in 4 of 4 rounds"}},
		{name: "a bank shown another configuration", edit: func(e *privacy.Entry) {
			if e.Client == "bank-b" && e.Round == 2 {
				e.SecAgg.Config = strings.Repeat("ee", 32)
			}
		}, want: want{secure: 3, rounds: 4, clear: []uint64{2}, conflicts: 1, words: "in 3 of 4 rounds"}},
		{name: "neighbours that do not name each other back", edit: func(e *privacy.Entry) {
			if e.Round == 4 {
				e.SecAgg.Degree, e.SecAgg.Threshold = 1, 2
				e.SecAgg.Neighbours = e.SecAgg.Neighbours[:1]
			}
		}, want: want{secure: 3, rounds: 4, clear: []uint64{4}, conflicts: 1, words: "in 3 of 4 rounds"}},
		{name: "no round", skip: map[string][]uint64{"bank-a": {1, 2, 3, 4}},
			want: want{secure: 0, rounds: 4, clear: []uint64{1, 2, 3, 4}, words: "aggregated securely in none of 4 rounds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			es := secAggJob(t, tc.skip, tc.fold, tc.edit)
			rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			sa := rep.SecureAggregation
			for _, ch := range []privacy.Channel{privacy.ChannelModel, privacy.ChannelGrad} {
				c, ok := sa.Channel(ch)
				if !ok || c.Secure != tc.want.secure || c.Rounds != tc.want.rounds || !slices.Equal(c.Clear, tc.want.clear) {
					t.Fatalf("%s: %+v, want %d of %d secure, clear %v", ch, c, tc.want.secure, tc.want.rounds, tc.want.clear)
				}
				if c.Secure > 0 && (c.Threshold != 2 || c.CohortMin != 3 || c.CohortMax != 3) {
					t.Fatalf("%s: t %d cohorts %d–%d, want 2 of 3", ch, c.Threshold, c.CohortMin, c.CohortMax)
				}
			}
			if len(sa.Conflicts) != tc.want.conflicts {
				t.Fatalf("conflicts %v, want %d", sa.Conflicts, tc.want.conflicts)
			}
			if w := sa.Words(); len(w) != 2 || !strings.Contains(w[0], tc.want.words) || !strings.HasPrefix(w[1], "grad channel:") {
				t.Fatalf("words %q, want the model's to say %q", w, tc.want.words)
			}
			// The records change what the aggregator saw, never an ε.
			plain, err := privacy.Audit(withoutSecAgg(es), privacy.AuditOptions{Delta: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Channels, plain.Channels) || !reflect.DeepEqual(rep.Clients, plain.Clients) ||
				!reflect.DeepEqual(rep.Rounds, plain.Rounds) || rep.Releases != plain.Releases || plain.SecureAggregation.Records != 0 {
				t.Fatalf("the secagg records changed the audit's ε:\n%+v\n%+v", rep.Channels, plain.Channels)
			}
			if rep.Entries != plain.Entries+sa.Records {
				t.Fatalf("%d entries, want %d releases and %d records", rep.Entries, plain.Entries, sa.Records)
			}
		})
	}
}

// Per bank: the rounds it recorded and those it folded in.
func TestAuditSecureAggregationBanks(t *testing.T) {
	es := secAggJob(t, map[string][]uint64{"bank-b": {2}}, map[string]map[uint64][]uint64{"bank-b": {3: {2}}}, nil)
	rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	want := []privacy.SecAggBank{
		{Job: "job-1", Client: "bank-a", Rounds: []uint64{1, 2, 3, 4}, Threshold: 2, Cohort: 3},
		{Job: "job-1", Client: "bank-b", Rounds: []uint64{1, 3, 4}, Folded: []uint64{2}, Threshold: 2, Cohort: 3},
		{Job: "job-1", Client: "bank-c", Rounds: []uint64{1, 2, 3, 4}, Threshold: 2, Cohort: 3},
	}
	if got := rep.SecureAggregation.Banks; !reflect.DeepEqual(got, want) || rep.SecureAggregation.Records != 11 {
		t.Fatalf("banks %+v (%d records), want %+v", got, rep.SecureAggregation.Records, want)
	}
	if got := privacy.FormatRounds([]uint64{1, 2, 3, 5, 7, 8}); got != "1–3, 5, 7–8" {
		t.Errorf("FormatRounds: %q", got)
	}
}

// The audit text of a job with secure aggregation; and the stored form of
// secagg records is stable, like every entry's.
func TestAuditSecureAggregationGolden(t *testing.T) {
	es := secAggJob(t, map[string][]uint64{"bank-c": {4}}, nil, nil)
	rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "audit_secagg.golden", b.Bytes())

	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := privacy.OpenFileLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range ledgertest.SecAggEntries() {
		if err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	checkGolden(t, "ledger_secagg_golden.jsonl", got)
}
