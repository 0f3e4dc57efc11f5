package privacy

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// FuzzSecAggDecode: DecodeEntry on secure-aggregation records never
// panics; what it accepts carries a record exactly on the secagg channel,
// a sorted cohort of bank ids holding its bank, as many neighbours as the
// degree, all in the cohort and none the bank, a threshold within a
// neighbourhood, stale rounds ascending below the round, and nothing of a
// release; and it re-encodes to the same bytes and digest.
//
//	go test ./privacy -run XXX -fuzz '^FuzzSecAggDecode$' -fuzztime 10m -parallel 1
func FuzzSecAggDecode(f *testing.F) {
	valid, err := EncodeEntry(secAggEntry())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	for _, edit := range []func(*Entry){
		func(e *Entry) { e.SecAgg.Stale = nil },
		func(e *Entry) { e.SecAgg.Neighbours = []string{"bank-b", "bank-c"} },
		func(e *Entry) { e.Channel = ChannelModel },
		func(e *Entry) { e.SecAgg.Cohort = []string{"bank-a", "bank-a", "bank-b", "bank-c"} },
		func(e *Entry) { e.SecAgg.Stale = []uint64{5} },
		func(e *Entry) { e.SecAgg.Threshold = 9 },
	} {
		e := secAggEntry()
		edit(&e)
		b, err := EncodeEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(bytes.Replace(valid, []byte(`"t":2`), []byte(`"t":2,"x":1`), 1))
	f.Add(bytes.Replace(valid, []byte(`"stale":[3,4]`), []byte(`"stale":[]`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("decode failed without ErrInvalid: %v", err)
			}
			return
		}
		if (e.SecAgg != nil) != (e.Channel == ChannelSecAgg) {
			t.Fatalf("accepted a %s entry with secagg record %+v", e.Channel, e.SecAgg)
		}
		if r := e.SecAgg; r != nil {
			n := len(r.Cohort)
			switch {
			case e.Count != 0 || e.Sigma != 0 || e.Rho != 0 || e.NodeIDs != nil || e.Calibration != nil || e.Heads != nil:
				t.Fatalf("accepted a secagg entry with release fields: %+v", e)
			case n < 2 || n > MaxSecAggCohort || !slices.IsSorted(r.Cohort) || len(slices.Compact(slices.Clone(r.Cohort))) != n:
				t.Fatalf("accepted cohort %v", r.Cohort)
			case !slices.Contains(r.Cohort, e.Client) || e.Client == AggregatorClient || slices.Contains(r.Cohort, AggregatorClient):
				t.Fatalf("accepted cohort %v of bank %s", r.Cohort, e.Client)
			case len(r.Neighbours) != r.Degree || r.Degree > n-1 || slices.Contains(r.Neighbours, e.Client):
				t.Fatalf("accepted neighbours %v of degree %d", r.Neighbours, r.Degree)
			case r.Threshold < 2 || r.Threshold > r.Degree+1 || r.Bits < 1 || r.Bits > 32 || !finitePos(r.Scale):
				t.Fatalf("accepted t %d b %d scale %v", r.Threshold, r.Bits, r.Scale)
			case r.Stale != nil && (len(r.Stale) == 0 || !slices.IsSorted(r.Stale) || r.Stale[len(r.Stale)-1] >= e.Round):
				t.Fatalf("accepted stale rounds %v of round %d", r.Stale, e.Round)
			}
			for _, p := range r.Neighbours {
				if !slices.Contains(r.Cohort, p) {
					t.Fatalf("accepted neighbour %s outside cohort %v", p, r.Cohort)
				}
			}
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
		enc2, _ := EncodeEntry(back)
		if d2, _ := back.Digest(); d1 != d2 || !bytes.Equal(enc, enc2) {
			t.Fatalf("entry changed through re-encoding:\n%s\n%s", enc, enc2)
		}
	})
}
