package runreport

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRoundsRoundTrip: what WriteRounds writes, DecodeRounds reads back,
// NaN scores (rounds not evaluated) included.
func TestRoundsRoundTrip(t *testing.T) {
	in := []Round{
		{Round: 1, Reason: "quorum", In: []string{"a", "b"}, Seconds: 1.5, Score: 0.25, Bytes: 100, Messages: 3, ClientEpsilon: 2e10, NodeEpsilon: 4.5},
		{Round: 2, Reason: "deadline", In: []string{"a"}, Late: []string{"b"}, Stale: []string{"c"}, Seconds: 30, Score: math.NaN(), Bytes: 200, Messages: 6},
	}
	var b bytes.Buffer
	if err := WriteRounds(&b, "val_f1_illicit", in); err != nil {
		t.Fatal(err)
	}
	metric, out, err := DecodeRounds(&b)
	if err != nil {
		t.Fatal(err)
	}
	if metric != "val_f1_illicit" || len(out) != 2 || !math.IsNaN(out[1].Score) {
		t.Fatalf("metric %q rows %+v", metric, out)
	}
	out[1].Score, in[1].Score = 0, 0
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("read back %+v, wrote %+v", out, in)
	}
}

// TestDecodeRoundsErrors: a malformed file is refused with what is wrong.
func TestDecodeRoundsErrors(t *testing.T) {
	head := strings.Join(roundsHeader("test_acc"), ",") + "\n"
	cases := []struct{ name, in, want string }{
		{"empty", "", "header"},
		{"wrong column", strings.Replace(head, "reason", "why", 1), `column 2 is "why"`},
		{"no metric", strings.Replace(head, "test_acc_start", "score", 1), "<metric>_start"},
		{"short row", head + "1,quorum,a\n", "wrong number of fields"},
		{"bad round", head + "x,quorum,a,,,1,0.5,10,1,0,0\n", "line 2: round"},
		{"negative bytes", head + "1,quorum,a,,,1,0.5,-10,1,0,0\n", "bytes"},
		{"negative seconds", head + "1,quorum,a,,,-1,0.5,10,1,0,0\n", "seconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := DecodeRounds(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestClientRoundsRoundTrip(t *testing.T) {
	in := []ClientScore{{1, "bank-1", 0.5}, {1, "bank-2", math.NaN()}, {2, "bank-1", 0.75}}
	var b bytes.Buffer
	if err := WriteClientRounds(&b, in); err != nil {
		t.Fatal(err)
	}
	out, err := DecodeClientRounds(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0] != in[0] || out[2] != in[2] || !math.IsNaN(out[1].Score) || out[1].Client != "bank-2" {
		t.Fatalf("read back %+v", out)
	}
	for _, bad := range []string{"", "round,client\n", "round,client,score\n1,,0.5\n", "round,client,score\n1,a,Inf\n"} {
		if _, err := DecodeClientRounds(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDecodeSummary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "aml-run", SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeSummary(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if s.Command != "sim" || s.Algo != "cefedgnn" || s.Build == nil || s.Build.GoVersion == "" || s.PrivacySettings == nil ||
		s.PrivacySettings.NodeTarget != 8 || s.Comm == nil || s.Comm.Channels["emb"].Bytes == 0 || len(s.Changed) == 0 {
		t.Fatalf("summary %+v", s)
	}
	for _, bad := range []string{"", "{}", `{"command": 3}`, "[1]"} {
		if _, err := DecodeSummary(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
