package privacy

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzRecordDecode: DecodeEntry on the aggregator's records and anchored
// entries never panics; what it accepts is a record of the aggregator with
// valid heads sorted by client and nothing of a release, or a bank's entry
// whose anchor names an entry, and it re-encodes to the same digest.
//
//	go test ./privacy -run XXX -fuzz '^FuzzRecordDecode$' -fuzztime 10m -parallel 1
func FuzzRecordDecode(f *testing.F) {
	d := strings.Repeat("0a", 32)
	f.Add([]byte(`{"seq":1,"job":"j","client":"aggregator","channel":"round","round":0,"count":0,"dim":0,"sigma":0,"clip":0,"rho":0,"time":"2026-01-01T00:00:00Z","seeded":false}`))
	f.Add([]byte(`{"seq":2,"job":"j","client":"aggregator","channel":"round","round":1,"count":0,"dim":0,"sigma":0,"clip":0,"rho":0,"time":"2026-01-01T00:00:00Z","seeded":false,"heads":[{"client":"bank-a","seq":2,"digest":"` + d + `"},{"client":"bank-b","seq":1,"digest":"` + d + `"}],"prev":"` + d + `"}`))
	f.Add([]byte(`{"seq":3,"job":"j","client":"aggregator","channel":"done","round":1,"count":0,"dim":0,"sigma":0,"clip":0,"rho":0,"time":"2026-01-01T00:00:00Z","seeded":false,"heads":[{"client":"bank-b","seq":1,"digest":"` + d + `"},{"client":"bank-a","seq":2,"digest":"` + d + `"}],"prev":"` + d + `"}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"bank-a","channel":"done","round":1,"count":0,"dim":0,"sigma":0,"clip":0,"rho":0,"time":"2026-01-01T00:00:00Z","seeded":false}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"aggregator","channel":"round","round":1,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"2026-01-01T00:00:00Z","seeded":false}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"bank-a","channel":"model","round":1,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"2026-01-01T00:00:00Z","seeded":false,"anchor":{"seq":1,"digest":"` + d + `"}}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"bank-a","channel":"model","round":1,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"2026-01-01T00:00:00Z","seeded":false,"anchor":{"seq":0,"digest":""}}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"bank-a","channel":"model","round":1,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"2026-01-01T00:00:00Z","seeded":false,"heads":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("decode failed without ErrInvalid: %v", err)
			}
			return
		}
		if e.Channel.record() {
			if e.Client != AggregatorClient || e.Count != 0 || e.Sigma != 0 || e.NodeIDs != nil || e.Anchor != nil || e.Calibration != nil {
				t.Fatalf("accepted a record that is not the aggregator's alone: %+v", e)
			}
			if !slices.IsSortedFunc(e.Heads, func(a, b Head) int { return strings.Compare(a.Client, b.Client) }) {
				t.Fatalf("accepted unsorted heads %v", e.Heads)
			}
			for _, h := range e.Heads {
				if !h.Ref().Valid() || h.Client == AggregatorClient {
					t.Fatalf("accepted head %+v", h)
				}
			}
		} else if e.Client == AggregatorClient || len(e.Heads) > 0 || e.Anchor != nil && !e.Anchor.Valid() {
			t.Fatalf("accepted a bank's entry with record fields: %+v", e)
		}
		d1, _ := e.Digest()
		enc, err := EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEntry(enc)
		if err != nil {
			t.Fatalf("re-encoded entry %s rejected: %v", enc, err)
		}
		if d2, _ := back.Digest(); d1 != d2 {
			t.Fatalf("digest changed through re-encoding: %s", enc)
		}
	})
}

// FuzzParseHeads: ParseHeads never panics; what it accepts are valid heads
// of distinct clients, sorted, and an error is ErrInvalid.
//
//	go test ./privacy -run XXX -fuzz '^FuzzParseHeads$' -fuzztime 5m -parallel 1
func FuzzParseHeads(f *testing.F) {
	d := strings.Repeat("ff", 32)
	f.Add([]byte(`[{"client":"bank-a","seq":1,"digest":"` + d + `"}]`))
	f.Add([]byte(`{"metrics":{"ledger_heads":[{"client":"aggregator","seq":4,"digest":"` + d + `"},{"client":"bank-a","seq":1,"digest":"` + d + `"}]}}`))
	f.Add([]byte(`{"ledger_heads":null}`))
	f.Add([]byte(`[] []`))
	f.Add([]byte(`{"metrics":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hs, err := ParseHeads(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		for i, h := range hs {
			if !validID(h.Client) || !h.Ref().Valid() || i > 0 && hs[i-1].Client >= h.Client {
				t.Fatalf("accepted heads %v", hs)
			}
		}
	})
}
