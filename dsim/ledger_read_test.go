package dsim

import (
	"context"
	"reflect"
	"testing"

	"graphfed/privacy"
)

// gated makes a gate of (job, client) over l, on the simulated clock.
func gated(t *testing.T, job, client string, l privacy.Ledger) *privacy.Gate {
	t.Helper()
	seed := uint64(7)
	g, err := privacy.NewGate(context.Background(), privacy.Config{Job: job, Client: client, Delta: 1e-4, Seed: &seed}, l, epoch)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func releaseRound(t *testing.T, g *privacy.Gate, round uint64) {
	t.Helper()
	if _, err := g.Release(context.Background(), privacy.Request{Channel: privacy.ChannelModel, Round: round,
		Flat: []float32{0.5, -0.25}, Dim: 2, Sigma: 1, Clip: 1}); err != nil {
		t.Fatal(err)
	}
}

// recordOf is the bytes of record i (from 0) of l.
func recordOf(t *testing.T, l *privacy.MemLedger, i int) []byte {
	t.Helper()
	recs, err := l.Records(context.Background())
	if err != nil || len(recs) <= i {
		t.Fatalf("record %d of %d: %v", i, len(recs), err)
	}
	return recs[i].Data
}

// The incremental reader returns what MemLedger.Entries returns, after
// every append: honest entries, and records a hostile writer could store
// (junk, a replay, an entry of another client or job), which it must judge
// as the whole read does.
func TestLedgerReaderMatchesEntries(t *testing.T) {
	ctx := context.Background()
	other := privacy.NewMemLedger() // records of other parties, to copy in
	releaseRound(t, gated(t, jobID, "bank-1", other), 1)
	releaseRound(t, gated(t, "another-job", "bank-0", other), 1)
	tests := []struct {
		name string
		ops  []func(t *testing.T, l *privacy.MemLedger, g *privacy.Gate)
	}{
		{"honest", nil},
		{"junk", []func(*testing.T, *privacy.MemLedger, *privacy.Gate){
			func(_ *testing.T, l *privacy.MemLedger, _ *privacy.Gate) { l.AppendRaw([]byte("{not an entry")) }}},
		{"replay", []func(*testing.T, *privacy.MemLedger, *privacy.Gate){
			func(t *testing.T, l *privacy.MemLedger, _ *privacy.Gate) { l.AppendRaw(recordOf(t, l, 0)) }}},
		{"another client's entry", []func(*testing.T, *privacy.MemLedger, *privacy.Gate){
			func(t *testing.T, l *privacy.MemLedger, _ *privacy.Gate) { l.AppendRaw(recordOf(t, other, 0)) }}},
		{"another job's entry", []func(*testing.T, *privacy.MemLedger, *privacy.Gate){
			func(t *testing.T, l *privacy.MemLedger, _ *privacy.Gate) { l.AppendRaw(recordOf(t, other, 1)) }}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := privacy.NewMemLedger()
			g := gated(t, jobID, "bank-0", l)
			var r ledgerReader
			check := func(when string) {
				t.Helper()
				got, err := r.Entries(ctx, l)
				if err != nil {
					t.Fatal(err)
				}
				want, err := l.Entries(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: reader %+v, whole read %+v", when, got, want)
				}
			}
			check("empty")
			releaseRound(t, g, 1)
			check("after round 1")
			for i, op := range tc.ops {
				op(t, l, g)
				check("after op " + string(rune('0'+i)))
			}
			releaseRound(t, g, 2)
			check("after round 2")
			check("read again")
		})
	}
}

// The job's whole reading composed from the parts' readers is the one
// ReadLedger makes of all records in one ledger when the parts are clean,
// and the composition declines otherwise.
func TestWholeReadingComposesCleanParts(t *testing.T) {
	ctx := context.Background()
	type part struct {
		client string
		rounds int
		junk   bool // a junk record after its entries
	}
	tests := []struct {
		name   string
		parts  []part
		job    string // the job the whole is read for; "" jobID
		wantOK bool
	}{
		{"clean", []part{{"bank-0", 3, false}, {"bank-1", 2, false}, {"bank-2", 0, false}}, "", true},
		{"empty", []part{{"bank-0", 0, false}}, "", true},
		{"a junk record", []part{{"bank-0", 2, false}, {"bank-1", 2, true}}, "", false},
		{"a client in two parts", []part{{"bank-0", 1, false}, {"bank-0", 1, false}}, "", false},
		{"entries of another job", []part{{"bank-0", 1, false}}, "another-job", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := tc.job
			if job == "" {
				job = jobID
			}
			var readers []*ledgerReader
			var ledgers []*privacy.MemLedger
			for _, p := range tc.parts {
				l := privacy.NewMemLedger()
				g := gated(t, jobID, p.client, l)
				for r := range p.rounds {
					releaseRound(t, g, uint64(r+1))
				}
				if p.junk {
					l.AppendRaw([]byte("junk"))
				}
				r := &ledgerReader{}
				if _, err := r.Entries(ctx, l); err != nil { // read along the way, as a run does
					t.Fatal(err)
				}
				readers, ledgers = append(readers, r), append(ledgers, l)
			}
			got, ok, err := wholeReading(ctx, job, readers, ledgers)
			if err != nil || ok != tc.wantOK {
				t.Fatalf("ok %v, err %v; want ok %v", ok, err, tc.wantOK)
			}
			if !ok {
				return
			}
			all := privacy.NewMemLedger()
			for _, l := range ledgers {
				recs, _ := l.Records(ctx)
				for _, r := range recs {
					all.AppendRaw(r.Data)
				}
			}
			want, err := privacy.ReadLedger(ctx, all, privacy.VerifyOptions{Job: job})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("composed %+v\nwhole    %+v", got, want)
			}
		})
	}
}
