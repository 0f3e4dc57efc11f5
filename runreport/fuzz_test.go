package runreport

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func seed(f *testing.F, name string) {
	b, err := os.ReadFile(filepath.Join("testdata", "aml-run", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// FuzzDecodeRounds: any input is read or refused without panicking, and
// what is read writes back to a file that reads the same.
func FuzzDecodeRounds(f *testing.F) {
	seed(f, RoundsFile)
	f.Add([]byte(strings.Join(roundsHeader("m"), ",") + "\n1,quorum,a b,,c,1.5,NaN,1,1,1e11,8\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		metric, rows, err := DecodeRounds(bytes.NewReader(in))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteRounds(&b, metric, rows); err != nil {
			t.Fatal(err)
		}
		m2, rows2, err := DecodeRounds(&b)
		if err != nil || m2 != metric || len(rows2) != len(rows) {
			t.Fatalf("round trip: %v, metric %q/%q, %d/%d rows", err, m2, metric, len(rows2), len(rows))
		}
		for i := range rows {
			if rows[i].Round != rows2[i].Round || rows[i].Bytes != rows2[i].Bytes || strings.Join(rows[i].In, " ") != strings.Join(rows2[i].In, " ") {
				t.Fatalf("row %d: %+v became %+v", i, rows[i], rows2[i])
			}
		}
		if err := Write(&bytes.Buffer{}, Run{Summary: Summary{Command: "sim"}, Metric: metric, Rounds: rows}); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeClientRounds: any input is read or refused without
// panicking; scores read are numbers or NaN, never infinite.
func FuzzDecodeClientRounds(f *testing.F) {
	seed(f, ClientsFile)
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := DecodeClientRounds(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range rows {
			if math.IsInf(r.Score, 0) || r.Client == "" {
				t.Fatalf("row %+v read", r)
			}
		}
	})
}

// FuzzDecodeSummary: any input is read or refused without panicking,
// and a summary read renders.
func FuzzDecodeSummary(f *testing.F) {
	seed(f, SummaryFile)
	f.Add([]byte(`{"command":"sim","metrics":{"a":1e400},"privacy":{"delta":"x"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := DecodeSummary(bytes.NewReader(in))
		if err != nil {
			return
		}
		if err := Write(&bytes.Buffer{}, Run{Summary: s, Params: paramsOf(s)}); err != nil {
			t.Fatal(err)
		}
	})
}
