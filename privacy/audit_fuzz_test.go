package privacy

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAuditLedger drives the audit's whole input path, as `graphfed audit
// --ledger` does: a ledger file read by OpenFileLedgerReadOnly, then Audit
// and the text report. The reader never panics or fails: every complete
// line is either accepted or rejected, once, and a torn tail is reported
// exactly when the file does not end in a newline. Whatever it accepts,
// the audit accepts (the entries are valid and in sequence order), under
// either accountant, and the report is consistent:
// no ε is NaN or negative, counts match the entries, per-round ε never
// decreases, the last round's per-channel ε is the report's, and a client's
// composed ε is at least that of each of its model, grad and margin
// channels. Run it with
//
//	go test ./privacy -run XXX -fuzz '^FuzzAuditLedger$' -fuzztime 10m -parallel 1
func FuzzAuditLedger(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger_golden.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden, false)
	f.Add(golden, true)
	f.Add(golden[:len(golden)-20], false)
	f.Add([]byte{}, false)
	f.Add([]byte(`{"seq":1,"job":"j","client":"c","channel":"emb","round":3,"node_ids":[1,2],"count":2,"dim":1,"sigma":1e-160,"clip":1}`+"\n"+
		`{"seq":2,"job":"j","client":"c","channel":"calibration","round":3,"calibration":{"k":1,"n":2,"sampled":0,"q":[50],"rho":[0]}}`+"\n"), true)
	f.Add([]byte(`{"seq":1,"job":"j","client":"c","channel":"margin","round":1,"count":1,"dim":1,"sigma":0.01,"clip":1,"rho":2,"seeded":true}`+"\n"+
		`{"seq":2,"job":"j","client":"c","channel":"grad","round":0,"count":3,"dim":9,"sigma":1e300,"clip":1e300,"rho":1.7e308}`+"\n"+
		`{"seq":1,"job":"k","client":"c","channel":"model","round":2,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2}`+"\n"), false)
	// One file, rewritten for every input (a worker runs one at a time).
	path := filepath.Join(f.TempDir(), "ledger.jsonl")
	f.Fuzz(func(t *testing.T, data []byte, exact bool) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := OpenFileLedgerReadOnly(path)
		if err != nil {
			t.Fatalf("reading a ledger file failed: %v", err)
		}
		tt, torn := r.TornTail()
		wantTorn := len(data) > 0 && data[len(data)-1] != '\n'
		if torn != wantTorn {
			t.Fatalf("torn tail %v (%+v) for a file of %d bytes", torn, tt, len(data))
		}
		if torn && (tt.Offset+int64(tt.Bytes) != int64(len(data)) || bytes.IndexByte(data[tt.Offset:], '\n') >= 0 ||
			(tt.Offset > 0 && data[tt.Offset-1] != '\n')) {
			t.Fatalf("torn tail %+v of a %d-byte file", tt, len(data))
		}
		rd, err := ReadLedger(context.Background(), r, VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		entries := rd.Entries
		if lines := bytes.Count(data, []byte("\n")); rd.Records != lines || len(entries)+len(rd.Rejected) != lines {
			t.Fatalf("%d lines read as %d records: %d accepted, %d rejected", lines, rd.Records, len(entries), len(rd.Rejected))
		}
		kind := RDP
		if exact {
			kind = Exact
		}
		rep, err := AuditReading(rd, AuditOptions{Kind: kind, Delta: 1e-4})
		if err != nil {
			t.Fatalf("audit refused what the ledger reader accepted: %v", err)
		}
		checkAuditReport(t, rep, entries)
		if len(rep.Integrity.Rejected) != len(rd.Rejected) || len(rep.Integrity.Breaks) != len(rd.Breaks) {
			t.Fatalf("report lists %d rejects and %d breaks, the reading %d and %d",
				len(rep.Integrity.Rejected), len(rep.Integrity.Breaks), len(rd.Rejected), len(rd.Breaks))
		}
		if err := rep.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			job := entries[0].Job
			var mine []Entry
			for _, e := range entries {
				if e.Job == job {
					mine = append(mine, e)
				}
			}
			rj, err := Audit(entries, AuditOptions{Kind: kind, Delta: 1e-4, Job: job})
			if err != nil {
				t.Fatalf("audit of job %s: %v", job, err)
			}
			checkAuditReport(t, rj, mine)
		}
	})
}

func checkAuditReport(t *testing.T, rep Report, entries []Entry) {
	t.Helper()
	bad := func(x float64) bool { return math.IsNaN(x) || x < 0 }
	releases, seeded := 0, false
	for _, e := range entries {
		if e.Channel != ChannelCalibration {
			releases++
			seeded = seeded || e.Seeded
		}
	}
	if rep.Entries != len(entries) || rep.Releases != releases || rep.Seeded != seeded {
		t.Fatalf("report counts %d entries %d releases seeded=%v, want %d %d %v", rep.Entries, rep.Releases, rep.Seeded, len(entries), releases, seeded)
	}
	for _, c := range rep.Channels {
		if bad(c.Epsilon) {
			t.Fatalf("channel %s/%s/%s: ε = %v", c.Job, c.Client, c.Channel, c.Epsilon)
		}
	}
	for ch, eps := range rep.ChannelMax {
		if bad(eps) {
			t.Fatalf("channel max %s: ε = %v", ch, eps)
		}
	}
	for _, c := range rep.Clients {
		if bad(c.Epsilon) {
			t.Fatalf("client %s/%s: ε = %v", c.Job, c.Client, c.Epsilon)
		}
		for _, ch := range rep.Channels {
			if ch.Job == c.Job && ch.Client == c.Client && ch.Channel != ChannelEmb && ch.Epsilon > c.Epsilon*(1+1e-9)+1e-12 {
				t.Fatalf("client %s/%s: composed ε %v below its %s channel's %v", c.Job, c.Client, c.Epsilon, ch.Channel, ch.Epsilon)
			}
		}
	}
	for _, p := range rep.Percentiles {
		if bad(p.WorstEpsilon) || bad(p.MedianEpsilon) || bad(p.Rho) {
			t.Fatalf("percentile %v: ρ %v worst ε %v median ε %v", p.Q, p.Rho, p.WorstEpsilon, p.MedianEpsilon)
		}
		if p.MedianEpsilon > p.WorstEpsilon*(1+1e-9)+1e-12 {
			t.Fatalf("percentile %v: median node ε %v above the worst node's %v", p.Q, p.MedianEpsilon, p.WorstEpsilon)
		}
	}
	for i, r := range rep.Rounds {
		if i > 0 && r.Round <= rep.Rounds[i-1].Round {
			t.Fatalf("rounds out of order: %d after %d", r.Round, rep.Rounds[i-1].Round)
		}
		for ch, eps := range r.Channels {
			if bad(eps) {
				t.Fatalf("round %d channel %s: ε = %v", r.Round, ch, eps)
			}
			if i > 0 {
				if prev, ok := rep.Rounds[i-1].Channels[ch]; ok && eps < prev*(1-1e-9)-1e-12 {
					t.Fatalf("channel %s: ε fell from %v to %v in round %d", ch, prev, eps, r.Round)
				}
			}
		}
		for k, eps := range r.Nodes {
			if bad(eps) {
				t.Fatalf("round %d node ε[%d] = %v", r.Round, k, eps)
			}
		}
	}
	if n := len(rep.Rounds); n > 0 {
		for ch, eps := range rep.Rounds[n-1].Channels {
			if want := rep.ChannelMax[ch]; math.Abs(eps-want) > 1e-9*math.Max(1, want) && !(math.IsInf(eps, 1) && math.IsInf(want, 1)) {
				t.Fatalf("channel %s: last round ε %v, report says %v", ch, eps, want)
			}
		}
	}
}
